import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDirective } from '@ryeos/directives';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  checkDepth,
  checkPreTurnLimits,
  DEFAULT_LIMITS,
  type Limits,
  limitErrorContext,
  limitMessage,
  resolveLimits,
} from '../src/policy/limits.js';
import { type ResilienceConfig, toolPreloadConfig } from '../src/policy/resilience-config.js';
import type { ChatMessage } from '../src/provider/types.js';

const SHIPPED = join(import.meta.dirname, '..', '.ai', 'config', 'agent', 'resilience.yaml');
const resilience = parse(readFileSync(SHIPPED, 'utf8')) as ResilienceConfig;
const defaults = resilience.limits!.defaults!;

function directiveLimits(attributes: string) {
  const text = [
    '```xml',
    '<directive name="limited" version="1.0.0">',
    '  <metadata>',
    '    <description>Limited.</description>',
    `    <limits ${attributes}/>`,
    '  </metadata>',
    '</directive>',
    '```',
    'Body.',
  ].join('\n');
  return parseDirective(text, 'test/limited.md').limits;
}

function errorOf(run: () => unknown): { code?: string; message: string } {
  try {
    run();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('expected an error');
}

describe('the shipped resilience.yaml', () => {
  it('holds the spec defaults and tool_preload, and nothing the runner does not read', () => {
    // Signed by the system bundle's key, like every shipped item (scripts/sign-bundle.mjs).
    expect(readFileSync(SHIPPED, 'utf8')).toMatch(/^# rye:signed:/);
    expect(defaults).toEqual({ ...DEFAULT_LIMITS });
    expect(defaults).toEqual({
      turns: 25,
      tokens: 200000,
      spend: 1.0,
      spend_currency: 'USD',
      spawns: 50,
      depth: 10,
      duration_seconds: 1800,
    });
    expect(toolPreloadConfig(resilience)).toEqual({ enabled: true, max_tokens: 2000 });
    expect(Object.keys(resilience).sort()).toEqual(['limits', 'tool_preload']);
  });

  it('toolPreloadConfig fills in defaults', () => {
    expect(toolPreloadConfig(undefined)).toEqual({ enabled: true, max_tokens: 2000 });
    expect(toolPreloadConfig({ tool_preload: { enabled: false } })).toEqual({
      enabled: false,
      max_tokens: 2000,
    });
    expect(toolPreloadConfig({ tool_preload: { max_tokens: 'lots' as never } })).toEqual({
      enabled: true,
      max_tokens: 2000,
    });
  });
});

describe('resolveLimits', () => {
  it('a root thread gets the defaults', () => {
    expect(resolveLimits({ defaults })).toEqual(DEFAULT_LIMITS);
    expect(resolveLimits({})).toEqual(DEFAULT_LIMITS);
  });

  it('merges defaults, then the directive <limits>, then the overrides', () => {
    const limits = directiveLimits('turns="8" spend="0.5" depth="2"');
    expect(limits).toEqual({ turns: 8, spend: 0.5, depth: 2 });
    expect(resolveLimits({ defaults, directiveLimits: limits, overrides: { turns: 3 } })).toEqual({
      ...DEFAULT_LIMITS,
      turns: 3,
      spend: 0.5,
      depth: 2,
    });
  });

  it('rejects a key that is not a limit, naming the valid ones', () => {
    expect(
      errorOf(() => resolveLimits({ defaults, directiveLimits: directiveLimits('max_turns="5"') })),
    ).toMatchObject({
      code: 'VALIDATION',
      message:
        "Unknown limit 'max_turns' in directive <limits>. Valid limits: depth, duration_seconds, spawns, spend, spend_currency, tokens, turns",
    });
    expect(errorOf(() => resolveLimits({ defaults, overrides: { turnz: 5 } })).message).toBe(
      "Unknown limit 'turnz' in limit overrides. Valid limits: depth, duration_seconds, spawns, spend, spend_currency, tokens, turns",
    );
  });

  it('checks value types', () => {
    expect(
      errorOf(() => resolveLimits({ defaults, directiveLimits: directiveLimits('turns="many"') })).message,
    ).toBe(`Limit 'turns' in directive <limits> must be a number, got "many"`);
    expect(errorOf(() => resolveLimits({ defaults, overrides: { spend: -1 } })).message).toMatch(
      /must not be negative/,
    );
    expect(errorOf(() => resolveLimits({ defaults, overrides: { spend_currency: 5 } })).message).toMatch(
      /must be a non-empty string/,
    );
    expect(errorOf(() => resolveLimits({ defaults: { turns: 'x' } })).code).toBe('CONFIG');
    // Numeric strings read like the directive parser reads them.
    expect(resolveLimits({ defaults, overrides: { turns: '4', spend: '0.25' } })).toMatchObject({
      turns: 4,
      spend: 0.25,
    });
  });

  it('keeps extra keys a project adds to the defaults, and lets directives set them', () => {
    const limits = resolveLimits({
      defaults: { ...defaults, tool_calls: 100 },
      directiveLimits: { tool_calls: 7 },
    });
    expect(limits.tool_calls).toBe(7);
  });

  it('caps a child by its parent (min) and counts depth down', () => {
    const parent: Limits = {
      ...DEFAULT_LIMITS,
      turns: 5,
      tokens: 1000,
      spend: 0.2,
      spawns: 2,
      duration_seconds: 60,
    };
    expect(resolveLimits({ defaults, overrides: { turns: 50, spend: 0.1 }, parentLimits: parent })).toEqual({
      ...DEFAULT_LIMITS,
      turns: 5,
      tokens: 1000,
      spend: 0.1,
      spawns: 2,
      duration_seconds: 60,
      depth: 9,
    });
    expect(
      resolveLimits({ defaults, directiveLimits: { depth: 20 }, parentLimits: { depth: 3 } }).depth,
    ).toBe(2);
    expect(
      resolveLimits({ defaults, directiveLimits: { depth: 1 }, parentLimits: { depth: 10 } }).depth,
    ).toBe(1);
    // Keys a parent's thread.json lacks cap nothing.
    expect(resolveLimits({ defaults, parentLimits: { turns: 4 } })).toEqual({ ...DEFAULT_LIMITS, turns: 4 });
  });

  it('root depth 1: the child runs with depth 0, the grandchild is rejected', () => {
    const root = resolveLimits({ defaults, directiveLimits: { depth: 1 } });
    expect(root.depth).toBe(1);
    const child = resolveLimits({ defaults, parentLimits: root });
    expect(child.depth).toBe(0);
    expect(() => checkDepth(child)).not.toThrow();
    const grandchild = resolveLimits({ defaults, parentLimits: child });
    expect(grandchild.depth).toBe(-1);
    expect(errorOf(() => checkDepth(grandchild))).toMatchObject({
      code: 'LIMIT',
      message: 'Depth limit exhausted (resolved depth=-1)',
    });
  });
});

describe('checkPreTurnLimits', () => {
  const limits = { ...DEFAULT_LIMITS, turns: 3, tokens: 100, spend: 0.5, duration_seconds: 10 };
  const fresh = { turns: 0, tokens: 0, spend: 0, elapsedSeconds: 0 };

  it('passes while every value is below its limit', () => {
    expect(
      checkPreTurnLimits(limits, { turns: 2, tokens: 99, spend: 0.49, elapsedSeconds: 9.9 }),
    ).toBeUndefined();
    expect(checkPreTurnLimits(limits, fresh, 0.01)).toBeUndefined();
  });

  it('reports the first of turns, tokens, spend, duration that reached its limit', () => {
    const all = { turns: 3, tokens: 100, spend: 0.5, elapsedSeconds: 10 };
    expect(checkPreTurnLimits(limits, all)).toEqual({
      limit_code: 'turns_exceeded',
      current_value: 3,
      current_max: 3,
    });
    expect(checkPreTurnLimits(limits, { ...all, turns: 1 })?.limit_code).toBe('tokens_exceeded');
    expect(checkPreTurnLimits(limits, { ...all, turns: 1, tokens: 5 })).toEqual({
      limit_code: 'spend_exceeded',
      current_value: 0.5,
      current_max: 0.5,
    });
    expect(checkPreTurnLimits(limits, { ...fresh, elapsedSeconds: 12.5 })).toEqual({
      limit_code: 'duration_seconds_exceeded',
      current_value: 12.5,
      current_max: 10,
    });
  });

  it('treats an exhausted budget ledger as a spend breach', () => {
    expect(checkPreTurnLimits(limits, { ...fresh, spend: 0.1 }, 0)).toEqual({
      limit_code: 'spend_exceeded',
      current_value: 0.5,
      current_max: 0.5,
    });
    expect(checkPreTurnLimits(limits, fresh, -0.25)?.current_value).toBe(0.75);
    // Turns and tokens still come first.
    expect(checkPreTurnLimits(limits, { ...fresh, turns: 3 }, -1)?.limit_code).toBe('turns_exceeded');
  });

  it('limitMessage reads as the spec shows', () => {
    expect(limitMessage({ limit_code: 'turns_exceeded', current_value: 3, current_max: 3 })).toBe(
      'Limit exceeded: turns_exceeded (3/3)',
    );
  });
});

describe('limitErrorContext', () => {
  const tool = (content: string): ChatMessage => ({ role: 'tool', tool_call_id: 'c', content });

  it('collects the last assistant text and recent tool results, errors apart, newest first', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'first' },
      tool('{"ok":1}'),
      tool('{"error":"Permission denied: x"}'),
      tool('{"ok":2}'),
      tool('Access DENIED'),
      tool('{"ok":3}'),
      tool('{"ok":4}'),
      { role: 'assistant', content: 'x'.repeat(600) },
    ];
    const llmErrors = [{ attempt: 1 }, { attempt: 2 }, { attempt: 3 }, { attempt: 4 }];
    expect(limitErrorContext(messages, llmErrors)).toEqual({
      last_assistant: 'x'.repeat(500),
      recent_tool_calls: ['{"ok":4}', '{"ok":3}', '{"ok":2}'],
      recent_errors: ['Access DENIED', '{"error":"Permission denied: x"}'],
      recent_llm_errors: [{ attempt: 2 }, { attempt: 3 }, { attempt: 4 }],
    });
  });

  it('cuts tool results to 300 characters, looks at the last 12 messages, and stops after 6 results', () => {
    const old: ChatMessage[] = [{ role: 'assistant', content: 'too old' }, ...Array(12).fill(tool('ok'))];
    const context = limitErrorContext(old);
    expect(context.last_assistant).toBe('');
    expect(context.recent_tool_calls).toEqual(['ok', 'ok', 'ok']);
    const long = limitErrorContext([tool('é'.repeat(400))]);
    expect(long.recent_tool_calls[0]).toBe('é'.repeat(300));
    const stops = limitErrorContext([tool('error early'), ...Array(6).fill(tool('ok'))]);
    expect(stops.recent_errors).toEqual([]);
    expect(limitErrorContext([])).toEqual({
      last_assistant: '',
      recent_tool_calls: [],
      recent_errors: [],
      recent_llm_errors: [],
    });
  });
});

describe('limit overrides', () => {
  it('only lower: never above the directive, or the default where the directive is silent', () => {
    const limits = resolveLimits({
      defaults: { turns: 25, spend: 1.0 },
      directiveLimits: { turns: 2, spend: 0.01 },
      overrides: { turns: 100_000, spend: 5000, tokens: 10_000_000, duration_seconds: 60 },
    });
    expect(limits).toMatchObject({ turns: 2, spend: 0.01, tokens: 200_000, duration_seconds: 60 });
  });
});
