import type { Capability } from '@ryeos/directives';
import { parseDirective } from '@ryeos/directives';
import { describe, expect, it } from 'vitest';
import {
  attenuate,
  capabilitiesFromDirective,
  checkPermission,
  type PaletteToolRef,
  type PermissionRequest,
  parseSearchScope,
  permissionsFromChain,
  permissionTarget,
} from '../src/policy/capabilities.js';
import { fnmatch, globCovers } from '../src/policy/fnmatch.js';

function directive(permissions: string): string {
  return [
    '```xml',
    '<directive name="perms" version="1.0.0">',
    '  <metadata>',
    '    <description>Permissions.</description>',
    `    ${permissions}`,
    '  </metadata>',
    '</directive>',
    '```',
    'Body.',
  ].join('\n');
}

const capsOf = (permissions: string) =>
  capabilitiesFromDirective(parseDirective(directive(permissions), 'test/perms.md').permissions);

const cap = (content: string): Capability => ({ tag: 'cap', content });

describe('capabilitiesFromDirective', () => {
  it('turns the spec example into its four capabilities', () => {
    const caps = capsOf(`<permissions>
      <execute><tool>rye.file-system.*</tool><directive>test/*</directive></execute>
      <search><knowledge>*</knowledge></search>
      <load>*</load>
      <acknowledge risk="elevated">needs shell</acknowledge>
    </permissions>`);
    expect(caps).toEqual([
      'rye.execute.tool.rye.file-system.*',
      'rye.execute.directive.test.*',
      'rye.search.knowledge.*',
      'rye.load.*',
    ]);
  });

  it('[BUG] a bare * in <permissions> grants rye.* (everything), also beside an <acknowledge>', () => {
    expect(capsOf('<permissions>*</permissions>')).toEqual(['rye.*']);
    expect(
      capsOf('<permissions>\n  *\n  <acknowledge risk="unrestricted">root</acknowledge>\n</permissions>'),
    ).toEqual(['rye.*']);
  });

  it('maps a primary with text to rye.<primary>.<text> and slashes to dots', () => {
    expect(capsOf('<permissions><execute>tool.rye.core.*</execute></permissions>')).toEqual([
      'rye.execute.tool.rye.core.*',
    ]);
    expect(capsOf('<permissions><execute><tool>rye/file-system/read</tool></execute></permissions>')).toEqual(
      ['rye.execute.tool.rye.file-system.read'],
    );
  });

  it('declares nothing without <permissions> and ignores non-cap entries', () => {
    expect(capsOf('<category>x</category>')).toEqual([]);
    expect(capabilitiesFromDirective(undefined)).toEqual([]);
    expect(capabilitiesFromDirective([cap(' rye.load.* '), { tag: 'other', content: 'x' } as never])).toEqual(
      ['rye.load.*'],
    );
  });
});

describe('permissionsFromChain', () => {
  const d = (...caps: string[]) => ({ permissions: caps.map(cap) });
  it("keeps the leaf's own permissions", () => {
    expect(permissionsFromChain([d('rye.*'), d('rye.load.*')])).toEqual([cap('rye.load.*')]);
  });
  it('gives a leaf without permissions those of the root-most ancestor that declares any', () => {
    expect(permissionsFromChain([d(), d('rye.search.*'), d('rye.load.*'), d()])).toEqual([
      cap('rye.search.*'),
    ]);
    expect(permissionsFromChain([d(), d()])).toEqual([]);
    expect(permissionsFromChain([])).toEqual([]);
  });
});

describe('attenuate', () => {
  it('keeps a child cap its parent covers and narrows a broader one to the parent cap', () => {
    const parent = ['rye.execute.tool.rye.file-system.*', 'rye.search.*'];
    expect(attenuate(['rye.execute.tool.rye.file-system.read'], parent)).toEqual([
      'rye.execute.tool.rye.file-system.read',
    ]);
    expect(attenuate(['rye.*'], parent)).toEqual(['rye.execute.tool.rye.file-system.*']);
    expect(attenuate(['rye.execute.tool.rye.bash.*'], parent)).toEqual([]);
  });

  it('prefers a parent that covers the child over an earlier one the child covers', () => {
    expect(attenuate(['rye.execute.tool.*'], ['rye.execute.tool.rye.core.*', 'rye.execute.*'])).toEqual([
      'rye.execute.tool.*',
    ]);
  });

  it('normalises slashes on both sides', () => {
    expect(attenuate(['rye.execute.tool.rye/core/x'], ['rye.execute.tool.rye/core/*'])).toEqual([
      'rye.execute.tool.rye.core.x',
    ]);
  });

  it('child only → child, parent only → inherited, neither → deny all', () => {
    expect(attenuate(['rye.load.*'], undefined)).toEqual(['rye.load.*']);
    expect(attenuate([], ['rye.load.*'])).toEqual(['rye.load.*']);
    expect(attenuate(undefined, ['rye.load.*'])).toEqual(['rye.load.*']);
    expect(attenuate([], undefined)).toEqual([]);
    expect(attenuate(undefined, [])).toEqual([]);
  });

  it('gives nothing under a parent thread that holds no capabilities', () => {
    expect(attenuate(['rye.*'], [])).toEqual([]);
  });

  it('never keeps a child cap that fnmatch "matches" but the parent does not cover', () => {
    // Read as a name, 'rye.execute.tool.a*' matches the parent's `?`; as a pattern it is broader.
    expect(fnmatch('rye.execute.tool.a*', 'rye.execute.tool.a?')).toBe(true);
    expect(attenuate(['rye.execute.tool.a*'], ['rye.execute.tool.a?'])).toEqual(['rye.execute.tool.a?']);
    expect(attenuate(['rye.x.*'], ['rye.x.[*a]'])).toEqual(['rye.x.[*a]']);
  });

  it('only ever narrows: whatever the child asks, no name is allowed that the parent denies', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
    const atoms = ['a', 'b', '.', '*', '?', '[ab]', '[!a]', '[*]'];
    const pattern = () =>
      `r.${Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(atoms)).join('')}`;
    const set = () => Array.from({ length: 1 + Math.floor(random() * 3) }, pattern);
    const names = ['r.'];
    for (let i = 0; names.at(-1)!.length < 7; i++)
      for (const c of ['a', 'b', '.', '*', 'c']) names.push(names[i] + c);
    for (let round = 0; round < 300; round++) {
      const child = [...set(), pick(['r.*', '*', 'r.?*', 'r.a*'])];
      const parent = set();
      const result = attenuate(child, parent);
      for (const granted of result) {
        expect(
          parent.some((p) => globCovers(p, granted)),
          `${granted} from child ${child} under parent ${parent}`,
        ).toBe(true);
      }
      for (const name of names) {
        if (result.some((r) => fnmatch(name, r)))
          expect(
            parent.some((p) => fnmatch(name, p)),
            name,
          ).toBe(true);
      }
    }
  });
});

describe('checkPermission', () => {
  const request = (
    primary: PermissionRequest['primary'],
    itemType: string,
    itemId: string,
  ): PermissionRequest => ({
    primary,
    itemType,
    itemId,
  });

  it('denies with the exact message and fields of the spec', () => {
    const result = checkPermission(
      ['rye.execute.tool.rye.core.*'],
      request('execute', 'tool', 'rye/file-system/write'),
    );
    expect(result).toEqual({
      allowed: false,
      denial: {
        error:
          "Permission denied: 'rye.execute.tool.rye.file-system.write' not covered by capabilities ['rye.execute.tool.rye.core.*']",
        denied_action: 'execute',
        denied_item_type: 'tool',
        denied_item_id: 'rye/file-system/write',
      },
    });
    expect(JSON.stringify(result.allowed ? {} : result.denial)).toBe(
      '{"error":"Permission denied: \'rye.execute.tool.rye.file-system.write\' not covered by capabilities [\'rye.execute.tool.rye.core.*\']","denied_action":"execute","denied_item_type":"tool","denied_item_id":"rye/file-system/write"}',
    );
  });

  it('allows what a capability covers, * crossing segments', () => {
    expect(
      checkPermission(['rye.execute.tool.rye.*'], request('execute', 'tool', 'rye/file-system/write')),
    ).toEqual({
      allowed: true,
    });
    expect(checkPermission(['rye.*'], request('sign', 'config', 'agent/resilience')).allowed).toBe(true);
    expect(checkPermission(['rye.load.tool.*'], request('load', 'directive', 'x')).allowed).toBe(false);
  });

  it('denies everything when no capabilities are declared', () => {
    const result = checkPermission([], request('load', 'knowledge', 'notes/a'));
    expect(result.allowed ? '' : result.denial.error).toBe(
      "Permission denied: no capabilities declared. Cannot load knowledge 'notes/a'",
    );
    const search = checkPermission([], { primary: 'search', itemType: 'tool', itemId: '' });
    expect(search.allowed ? '' : search.denial.error).toBe(
      "Permission denied: no capabilities declared. Cannot search tool 'tool'",
    );
  });

  it('always allows executing the runner’s internal tools', () => {
    expect(
      checkPermission([], request('execute', 'tool', 'rye/agent/threads/internal/control')).allowed,
    ).toBe(true);
    expect(
      checkPermission(['rye.load.*'], request('execute', 'tool', 'rye/agent/threads/internal/x')).allowed,
    ).toBe(true);
    // Only executing them: signing or loading an id under that prefix is checked like any other.
    expect(checkPermission([], request('sign', 'tool', 'rye/agent/threads/internal/x')).allowed).toBe(false);
  });

  it('allows a search when a capability matches rye.search.<type> or rye.search.<type>.', () => {
    const search = (caps: string[], itemType: string, namespace?: string) =>
      checkPermission(caps, { primary: 'search', itemType, itemId: '', ...(namespace ? { namespace } : {}) })
        .allowed;
    expect(search(['rye.search.*'], 'tool')).toBe(true);
    expect(search(['rye.search.tool'], 'tool')).toBe(true);
    expect(search(['rye.search.tool.*'], 'tool')).toBe(true);
    expect(search(['rye.search.knowledge.*'], 'tool')).toBe(false);
    expect(search(['rye.execute.*'], 'tool')).toBe(false);
    // A namespaced search capability allows searching inside its namespace only.
    expect(search(['rye.search.tool.rye.core.*'], 'tool')).toBe(false);
    expect(search(['rye.search.tool.rye.core.*'], 'tool', 'rye/core')).toBe(true);
    expect(search(['rye.search.tool.rye.core.*'], 'tool', 'rye')).toBe(false);
    const denied = checkPermission(['rye.search.knowledge.*'], {
      primary: 'search',
      itemType: 'tool',
      itemId: '',
    });
    expect(denied).toEqual({
      allowed: false,
      denial: {
        error: "Permission denied: 'rye.search.tool' not covered by capabilities ['rye.search.knowledge.*']",
        denied_action: 'search',
        denied_item_type: 'tool',
        denied_item_id: '',
      },
    });
  });

  it('checks an id holding wildcards as a whole pattern', () => {
    expect(checkPermission(['rye.sign.tool.?'], request('sign', 'tool', '*')).allowed).toBe(false);
    expect(checkPermission(['rye.sign.tool.rye.core.*'], request('sign', 'tool', 'rye/*')).allowed).toBe(
      false,
    );
    expect(checkPermission(['rye.sign.tool.rye.*'], request('sign', 'tool', 'rye/core/*')).allowed).toBe(
      true,
    );
    expect(checkPermission(['rye.*'], request('sign', 'tool', 'rye/[ab]')).allowed).toBe(false);
  });
});

describe('parseSearchScope', () => {
  it('reads the three scope forms', () => {
    expect(parseSearchScope('tool')).toEqual({ itemType: 'tool', namespace: undefined });
    expect(parseSearchScope('tool.rye.core.*')).toEqual({ itemType: 'tool', namespace: 'rye/core' });
    expect(parseSearchScope('rye.search.tool.*')).toEqual({ itemType: 'tool', namespace: undefined });
    expect(parseSearchScope('rye.search.knowledge.notes.*')).toEqual({
      itemType: 'knowledge',
      namespace: 'notes',
    });
  });
  it('rejects a scope without an item type', () => {
    for (const bad of ['', '*', 'all', 'rye.search.*', 'config', undefined])
      expect(() => parseSearchScope(bad)).toThrow(/scope must specify an item_type/);
  });
});

describe('permissionTarget', () => {
  const primary = (name: 'execute' | 'search' | 'load' | 'sign'): PaletteToolRef => ({
    name: `rye_${name}`,
    _item_id: `rye/${name}`,
    _primary: name,
  });
  const read: PaletteToolRef = {
    name: 'rye_file_system_read',
    _item_id: 'rye/file-system/read',
    _primary: 'execute',
  };

  it('rye_execute targets its item_type/item_id, accepting canonical refs', () => {
    expect(permissionTarget({ item_type: 'tool', item_id: 'rye/bash/bash' }, primary('execute'))).toEqual({
      primary: 'execute',
      itemType: 'tool',
      itemId: 'rye/bash/bash',
    });
    expect(permissionTarget({ item_id: 'directive:acme/release' }, primary('execute'))).toEqual({
      primary: 'execute',
      itemType: 'directive',
      itemId: 'acme/release',
    });
    expect(permissionTarget({ item_type: 'tool', item_id: 'tool:x/y' }, primary('execute')).itemId).toBe(
      'x/y',
    );
  });

  it('rejects arguments no check can judge', () => {
    const execute = primary('execute');
    expect(() => permissionTarget({ item_id: 'rye/bash/bash' }, execute)).toThrow(/item_type is required/);
    expect(() => permissionTarget({ item_type: 'knowledge', item_id: 'tool:x' }, execute)).toThrow(
      /contradicts/,
    );
    expect(() => permissionTarget({ item_type: 'tool' }, execute)).toThrow(/item_id is required/);
    expect(() => permissionTarget({ item_id: 'config:agent/x' }, execute)).toThrow(/not one of/);
    expect(() => permissionTarget({ item_type: 'tool', item_id: 'rye/core/../bash/bash' }, execute)).toThrow(
      /Invalid item id/,
    );
  });

  it('rye_search targets the type its scope names', () => {
    expect(permissionTarget({ query: 'x', scope: 'tool.rye.core.*' }, primary('search'))).toEqual({
      primary: 'search',
      itemType: 'tool',
      itemId: '',
      namespace: 'rye/core',
    });
    expect(permissionTarget({ query: 'x', scope: 'rye.search.directive.*' }, primary('search'))).toEqual({
      primary: 'search',
      itemType: 'directive',
      itemId: '',
    });
  });

  it('rye_load and rye_sign target their arguments (sign also config)', () => {
    expect(permissionTarget({ item_type: 'knowledge', item_id: 'notes/a' }, primary('load'))).toEqual({
      primary: 'load',
      itemType: 'knowledge',
      itemId: 'notes/a',
    });
    expect(permissionTarget({ item_id: 'config:agent/resilience' }, primary('sign'))).toEqual({
      primary: 'sign',
      itemType: 'config',
      itemId: 'agent/resilience',
    });
  });

  it('[BUG] any other palette tool is checked as itself, never by an item_id argument', () => {
    const target = permissionTarget({ item_id: 'rye/core/harmless', path: 'a.txt' }, read);
    expect(target).toEqual({ primary: 'execute', itemType: 'tool', itemId: 'rye/file-system/read' });
    // The bypass: caps for rye/core/* must not let the model run rye/file-system/read.
    expect(checkPermission(['rye.execute.tool.rye.core.*'], target).allowed).toBe(false);
    const ret: PaletteToolRef = {
      name: 'rye_directive_return',
      _item_id: 'rye/agent/threads/directive_return',
      _primary: 'execute',
    };
    expect(permissionTarget({ result: 'done' }, ret).itemId).toBe('rye/agent/threads/directive_return');
  });
});
