import { describe, expect, it } from 'vitest';
import { classifyCapabilities, toolPatternSpecificity } from '../src/policy/palette-classes.js';

const grants = (caps: string[]) =>
  Object.fromEntries(
    [...classifyCapabilities(caps).primaries].map(([p, t]) => [p, t === 'all' ? 'all' : [...t].sort()]),
  );

describe('classifyCapabilities', () => {
  it('reads execute-tool capabilities as tool patterns (dots → slashes)', () => {
    const classes = classifyCapabilities([
      'rye.execute.tool.rye.file-system.*',
      'rye.execute.tool.rye.core.x',
    ]);
    expect(classes.executeToolPatterns).toEqual(['rye/core/x', 'rye/file-system/*']);
    expect(grants(['rye.execute.tool.rye.file-system.*'])).toEqual({ execute: ['tool'] });
  });

  it('grants the types named by their prefix', () => {
    expect(grants(['rye.execute.directive.test.*', 'rye.execute.knowledge.notes.a'])).toEqual({
      execute: ['directive', 'knowledge'],
    });
    expect(grants(['rye.search.knowledge.*', 'rye.search.tool'])).toEqual({ search: ['knowledge', 'tool'] });
    expect(grants(['rye.sign.config.agent.*'])).toEqual({ sign: ['config'] });
  });

  it('a bare primary grants every type', () => {
    expect(grants(['rye.search.*', 'rye.load.*', 'rye.sign.*'])).toEqual({
      search: 'all',
      load: 'all',
      sign: 'all',
    });
    expect(classifyCapabilities(['rye.execute.*']).executeToolPatterns).toEqual(['*']);
    expect(grants(['rye.execute.tool.x', 'rye.execute.directive.y', 'rye.execute.knowledge.z'])).toEqual({
      execute: 'all',
    });
  });

  it('[BUG] a bare * (rye.* or rye.execute.tool.*) offers every tool, not none', () => {
    const everything = classifyCapabilities(['rye.*']);
    expect(grants(['rye.*'])).toEqual({ execute: 'all', search: 'all', load: 'all', sign: 'all' });
    expect(everything.executeToolPatterns).toEqual(['*']);
    expect(classifyCapabilities(['rye.execute.tool.*']).executeToolPatterns).toEqual(['*']);
  });

  it('lists primaries in palette order whatever the capability order', () => {
    expect([
      ...classifyCapabilities(['rye.sign.*', 'rye.load.*', 'rye.execute.tool.x']).primaries.keys(),
    ]).toEqual(['execute', 'load', 'sign']);
  });

  it('orders tool patterns most specific first, without repeats', () => {
    const classes = classifyCapabilities([
      'rye.execute.tool.*',
      'rye.execute.tool.rye.*',
      'rye.execute.tool.rye.file-system.*',
      'rye.execute.tool.acme.*',
      'rye.execute.tool.rye.bash.bash',
      'rye.execute.tool.rye.*',
    ]);
    expect(classes.executeToolPatterns).toEqual([
      'rye/bash/bash',
      'rye/file-system/*',
      '*',
      'rye/*',
      'acme/*',
    ]);
  });

  it('sets aside capabilities that name nothing this palette offers', () => {
    const classes = classifyCapabilities([
      'rye.fetch.*',
      'rye.execute.tool',
      'rye.execute.rye.file-system.*',
      'rye.load.tool.x',
    ]);
    expect(classes.unclassified).toEqual([
      'rye.fetch.*',
      'rye.execute.tool',
      'rye.execute.rye.file-system.*',
    ]);
    expect(grants(['rye.load.tool.x'])).toEqual({ load: ['tool'] });
    expect(classifyCapabilities([]).primaries.size).toBe(0);
  });

  it('judges other wildcard shapes by what they can match', () => {
    expect(grants(['rye.l?ad.*'])).toEqual({ load: 'all' });
    expect(grants(['rye.load.[tk]*'])).toEqual({ load: ['knowledge', 'tool'] });
    // `*` crosses dots: this also matches rye.execute.directive.tool.x, so every type is reachable.
    expect(grants(['rye.*.tool.*'])).toEqual({ execute: 'all', search: 'all', load: 'all', sign: 'all' });
    expect(classifyCapabilities(['rye.*.tool.*']).executeToolPatterns).toEqual(['*']);
  });
});

describe('toolPatternSpecificity', () => {
  it('is 1000 for an exact id, else the segment count', () => {
    expect(toolPatternSpecificity('rye/file-system/read')).toBe(1000);
    expect(toolPatternSpecificity('rye/file-system/*')).toBe(2);
    expect(toolPatternSpecificity('rye/*')).toBe(1);
    expect(toolPatternSpecificity('*')).toBe(1);
  });
});
