import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  assessRisk,
  type CapabilityRiskConfig,
  classifyRisk,
  parseCapabilityRiskConfig,
} from '../src/policy/risk.js';

const SHIPPED = join(import.meta.dirname, '..', '.ai', 'config', 'agent', 'capability_risk.yaml');
const shipped = parseCapabilityRiskConfig(parse(readFileSync(SHIPPED, 'utf8')), SHIPPED);

describe('the shipped capability_risk.yaml', () => {
  it('is the signed bundle file with the four levels and their policies', () => {
    expect(readFileSync(SHIPPED, 'utf8')).toMatch(/^# rye:signed:/);
    expect(Object.fromEntries(Object.entries(shipped.risk_levels).map(([k, v]) => [k, v.policy]))).toEqual({
      safe: 'allow',
      write: 'allow',
      elevated: 'acknowledge_required',
      unrestricted: 'block',
    });
  });

  it.each([
    ['rye.*', 'unrestricted'],
    ['rye.execute.tool.rye.bash.*', 'elevated'],
    ['rye.execute.tool.rye.bash.bash', 'elevated'],
    ['rye.execute.tool.rye.shell.run', 'elevated'],
    ['rye.execute.tool.rye.web.fetch', 'elevated'],
    ['rye.execute.*', 'elevated'],
    ['rye.execute.directive.test.*', 'elevated'],
    ['rye.execute.tool.rye.file-system.*', 'write'],
    ['rye.execute.tool.rye.file-system.write', 'write'],
    ['rye.search.*', 'safe'],
    ['rye.load.knowledge.notes.*', 'safe'],
    ['rye.sign.tool.x', 'safe'],
    // Any wildcard before the primary is judged by `rye.*` alone.
    ['rye.?xecute.tool.rye.bash.*', 'unrestricted'],
  ])('classifies %s as %s (most dots wins)', (capability, risk) => {
    expect(classifyRisk(capability, shipped)?.risk).toBe(risk);
  });
});

describe('assessRisk', () => {
  it('blocks an unacknowledged unrestricted capability with the reference message', () => {
    const result = assessRisk(['rye.*'], [], shipped);
    expect(result.blocked).toEqual({
      capability: 'rye.*',
      level: 'unrestricted',
      message:
        "Capability 'rye.*' classified as 'unrestricted' (Wildcard grants full system access). " +
        'Add <acknowledge risk="unrestricted"> to the directive\'s <permissions> to explicitly allow this.',
    });
  });

  it('lets an acknowledged block through, still warning that the capability is broad', () => {
    const result = assessRisk(['rye.*'], [{ risk: 'unrestricted' }], shipped);
    expect(result.blocked).toBeUndefined();
    expect(result.warnings).toEqual(["Broad capabilities: ['rye.*'] — consider narrowing permissions"]);
  });

  it('warns about an unacknowledged elevated capability, and not once acknowledged', () => {
    expect(assessRisk(['rye.execute.tool.rye.bash.*'], [], shipped)).toEqual({
      warnings: [
        "Capability 'rye.execute.tool.rye.bash.*' classified as 'elevated' — Shell execution grants arbitrary command access. " +
          'Consider adding <acknowledge risk="elevated"> to the directive.',
      ],
    });
    expect(assessRisk(['rye.execute.tool.rye.bash.*'], [{ risk: 'elevated' }], shipped)).toEqual({
      warnings: [],
    });
  });

  it('allows safe and write capabilities silently', () => {
    expect(
      assessRisk(
        ['rye.execute.tool.rye.file-system.*', 'rye.search.knowledge.*', 'rye.load.tool.x'],
        [],
        shipped,
      ),
    ).toEqual({ warnings: [] });
  });

  it('grants the standard base (all four primaries) with warnings only', () => {
    const base = ['rye.execute.*', 'rye.search.*', 'rye.load.*', 'rye.sign.*'];
    const result = assessRisk(base, [], shipped);
    expect(result.blocked).toBeUndefined();
    expect(result.warnings).toHaveLength(2);
    expect(result.warnings[1]).toBe(
      "Broad capabilities: ['rye.execute.*', 'rye.search.*', 'rye.load.*', 'rye.sign.*'] — consider narrowing permissions",
    );
  });

  it('reports the first blocking capability and warns about the others', () => {
    const result = assessRisk(['rye.execute.tool.rye.web.get', 'rye.*', 'rye.x.*'], [], shipped);
    expect(result.blocked?.capability).toBe('rye.*');
    expect(result.warnings[0]).toMatch(/^Capability 'rye.execute.tool.rye.web.get' classified as 'elevated'/);
  });

  it('breaks ties between equally specific patterns by file order', () => {
    const config: CapabilityRiskConfig = {
      risk_levels: { a: { policy: 'allow' }, b: { policy: 'block' } },
      classifications: [
        { risk: 'a', patterns: ['x.*.z'] },
        { risk: 'b', patterns: ['x.y.*'] },
      ],
    };
    expect(classifyRisk('x.y.z', config)?.risk).toBe('a');
    expect(classifyRisk('q', config)).toBeUndefined();
  });
});

describe('parseCapabilityRiskConfig', () => {
  it('rejects what would silently change a policy', () => {
    const levels = { safe: { policy: 'allow' } };
    expect(() => parseCapabilityRiskConfig(null)).toThrow(/expected a mapping/);
    expect(() =>
      parseCapabilityRiskConfig({ risk_levels: { x: { policy: 'maybe' } }, classifications: [] }),
    ).toThrow(/risk_levels.x.policy must be one of allow, acknowledge_required, block/);
    expect(() =>
      parseCapabilityRiskConfig({
        risk_levels: levels,
        classifications: [{ risk: 'elevatd', patterns: ['rye.*'] }],
      }),
    ).toThrow(/classifications\[0\].risk 'elevatd' is not a level in risk_levels \(safe\)/);
    expect(() =>
      parseCapabilityRiskConfig({
        risk_levels: levels,
        classifications: [{ risk: 'safe', patterns: 'rye.*' }],
      }),
    ).toThrow(/patterns must be a list of strings/);
    let code: string | undefined;
    try {
      parseCapabilityRiskConfig({});
    } catch (error) {
      code = (error as { code?: string }).code;
    }
    expect(code).toBe('CONFIG');
  });
});
