/**
 * Capability risk (spec threads §4 "Risk", `capability_risk.yaml`): each granted capability gets
 * the level of the most specific classification pattern it matches (most dots wins, ties go to
 * file order); a `block` level stops the thread unless the directive acknowledges it, an
 * `acknowledge_required` level only warns.
 */
import { RyeError } from '@ryeos/lillux';
import { isRecord } from '../records.js';
import { fnmatch } from './fnmatch.js';
import { pyList } from './py-repr.js';

export const RISK_POLICIES = ['allow', 'acknowledge_required', 'block'] as const;
export type RiskPolicy = (typeof RISK_POLICIES)[number];

export interface RiskLevel {
  description?: string;
  policy: RiskPolicy;
}

export interface RiskClassification {
  /** A key of `risk_levels`. */
  risk: string;
  /** fnmatch patterns matched against each capability string. */
  patterns: string[];
  description?: string;
}

/** The shape of `.ai/config/agent/capability_risk.yaml` once merged. */
export interface CapabilityRiskConfig {
  risk_levels: Record<string, RiskLevel>;
  classifications: RiskClassification[];
}

function configError(source: string, what: string): RyeError {
  return new RyeError('CONFIG', `${source}: ${what}`, {
    hint: 'Fix the file (see the shipped .ai/config/agent/capability_risk.yaml), then re-sign it.',
    details: { source },
  });
}

/**
 * Checks a parsed `capability_risk.yaml` and returns it typed. A classification naming an
 * unknown level is an error (the reference treated it as `allow`, so a typo silently lifted a block).
 */
export function parseCapabilityRiskConfig(
  raw: unknown,
  source = 'capability_risk.yaml',
): CapabilityRiskConfig {
  if (!isRecord(raw)) throw configError(source, 'expected a mapping with risk_levels and classifications');
  const levels = raw.risk_levels;
  if (!isRecord(levels)) throw configError(source, 'risk_levels must be a mapping of level name → {policy}');
  const risk_levels: Record<string, RiskLevel> = {};
  for (const [name, level] of Object.entries(levels)) {
    const policy = isRecord(level) ? level.policy : undefined;
    if (!(RISK_POLICIES as readonly unknown[]).includes(policy))
      throw configError(source, `risk_levels.${name}.policy must be one of ${RISK_POLICIES.join(', ')}`);
    const description =
      isRecord(level) && typeof level.description === 'string' ? level.description : undefined;
    risk_levels[name] = {
      policy: policy as RiskPolicy,
      ...(description !== undefined ? { description } : {}),
    };
  }
  const list = raw.classifications;
  if (!Array.isArray(list)) throw configError(source, 'classifications must be a list of {risk, patterns}');
  const classifications = list.map((entry, i): RiskClassification => {
    if (!isRecord(entry)) throw configError(source, `classifications[${i}] must be a mapping`);
    const { risk, patterns, description } = entry;
    if (typeof risk !== 'string' || !(risk in risk_levels))
      throw configError(
        source,
        `classifications[${i}].risk '${String(risk)}' is not a level in risk_levels (${Object.keys(risk_levels).join(', ')})`,
      );
    if (!Array.isArray(patterns) || !patterns.every((p) => typeof p === 'string'))
      throw configError(source, `classifications[${i}].patterns must be a list of strings`);
    return { risk, patterns, ...(typeof description === 'string' ? { description } : {}) };
  });
  return { risk_levels, classifications };
}

export interface RiskMatch {
  capability: string;
  risk: string;
  policy: RiskPolicy;
  description: string;
  pattern: string;
}

/** The most specific classification a capability matches (most dots; ties: file order), if any. */
export function classifyRisk(capability: string, config: CapabilityRiskConfig): RiskMatch | undefined {
  let best: RiskMatch | undefined;
  let bestDots = -1;
  for (const classification of config.classifications) {
    for (const pattern of classification.patterns) {
      if (!fnmatch(capability, pattern)) continue;
      const dots = pattern.split('.').length - 1;
      if (dots <= bestDots) continue;
      bestDots = dots;
      best = {
        capability,
        risk: classification.risk,
        policy: config.risk_levels[classification.risk]?.policy ?? 'block',
        description: classification.description ?? '',
        pattern,
      };
    }
  }
  return best;
}

export interface RiskAssessment {
  /** The first capability whose level blocks and is not acknowledged: the thread must not start. */
  blocked?: { capability: string; level: string; message: string };
  /** Unacknowledged `acknowledge_required` levels, and broad capabilities; for the log. */
  warnings: string[];
}

/**
 * Judges the thread's (attenuated) capabilities. `acknowledged` are the directive's
 * `<acknowledge risk="…">` entries; acknowledging a level lifts its block and silences its warning.
 * Capabilities ending `.*` with at most two dots (`rye.*`, `rye.execute.*`) add a warning.
 */
export function assessRisk(
  caps: readonly string[],
  acknowledged: ReadonlyArray<{ risk: string }>,
  config: CapabilityRiskConfig,
): RiskAssessment {
  const acked = new Set(acknowledged.map((a) => a.risk));
  const warnings: string[] = [];
  let blocked: RiskAssessment['blocked'];
  for (const cap of caps) {
    const match = classifyRisk(cap, config);
    if (!match || acked.has(match.risk)) continue;
    if (match.policy === 'block' && !blocked) {
      blocked = {
        capability: cap,
        level: match.risk,
        message:
          `Capability '${cap}' classified as '${match.risk}' (${match.description}). ` +
          `Add <acknowledge risk="${match.risk}"> to the directive's <permissions> to explicitly allow this.`,
      };
    } else if (match.policy === 'acknowledge_required') {
      warnings.push(
        `Capability '${cap}' classified as '${match.risk}' — ${match.description}. ` +
          `Consider adding <acknowledge risk="${match.risk}"> to the directive.`,
      );
    }
  }
  const broad = caps.filter((c) => c.endsWith('.*') && c.split('.').length - 1 <= 2);
  if (broad.length) warnings.push(`Broad capabilities: ${pyList(broad)} — consider narrowing permissions`);
  return blocked ? { blocked, warnings } : { warnings };
}
