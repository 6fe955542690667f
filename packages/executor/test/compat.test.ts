/**
 * Items in the original RYE format, signed with the original recipes (spec items §6.2), written
 * fresh here: whole-content legacy signatures keep verifying; partial ones (directive bodies,
 * front-matter knowledge) are refused unless RYE_ACCEPT_LEGACY_SIGNATURES=1 (DECISIONS 2).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { KeyPairPem, LegacyRecipe, SignatureFormat } from '@ryeos/lillux';
import { fingerprint, legacyHashInput, sha256Hex, signHash } from '@ryeos/lillux';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Workspace } from './helpers/workspace.js';
import { createWorkspace, FORMATS } from './helpers/workspace.js';

/** Signs like the original RYE: hash of the original recipe's input, line at its place. */
function originalSign(text: string, recipe: LegacyRecipe, format: SignatureFormat, key: KeyPairPem): string {
  const input = legacyHashInput(text, recipe, format)!.input;
  const hash = sha256Hex(input);
  const body = `rye:signed:2025-06-01T12:00:00Z:${hash}:${signHash(hash, key.privateKeyPem)}:${fingerprint(key.publicKeyPem)}`;
  const line = format.suffix ? `${format.prefix} ${body} ${format.suffix}` : `${format.prefix} ${body}`;
  if (format.afterShebang && text.startsWith('#!')) {
    const nl = text.indexOf('\n') + 1;
    return `${text.slice(0, nl)}${line}\n${text.slice(nl)}`;
  }
  return `${line}\n${text}`;
}

const ITEMS: {
  kind: 'tool' | 'directive' | 'knowledge' | 'config';
  path: string;
  recipe: LegacyRecipe;
  text: string;
}[] = [
  {
    kind: 'tool',
    path: 'tools/legacy/text/wordcount.py',
    recipe: 'tool',
    text: '#!/usr/bin/env python3\n"""Count words."""\n__version__ = "1.2.0"\n__tool_type__ = "python"\n__executor_id__ = "rye/core/runtimes/python/function"\n__category__ = "legacy/text"\n__tool_description__ = "Count words"\n\ndef execute(params, project_path):\n    return {"success": True, "words": len(params["text"].split())}\n',
  },
  {
    kind: 'tool',
    path: 'tools/legacy/js/pretty.js',
    recipe: 'tool',
    text: 'export const __version__ = "0.3.0";\nexport const __tool_type__ = "javascript";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "legacy/js";\nexport const CONFIG_SCHEMA = { type: "object", properties: { text: { type: "string" } } };\nconsole.log(JSON.stringify({ success: true }));\n',
  },
  {
    kind: 'tool',
    path: 'tools/legacy/ts/typed.ts',
    recipe: 'tool',
    text: 'export const __version__ = "0.1.0";\nexport const __executor_id__ = "rye/core/runtimes/node/node";\nexport const __category__ = "legacy/ts";\nexport const CONFIG: Record<string, unknown> = { retries: 2 };\nconsole.log("{}");\n',
  },
  {
    kind: 'tool',
    path: 'tools/legacy/sh/hello.sh',
    recipe: 'tool',
    text: '#!/usr/bin/env bash\n# __version__ = "1.0.0"\n# __executor_id__ = "rye/core/runtimes/bash/bash"\n# __category__ = "legacy/sh"\necho \'{"success": true}\'\n',
  },
  {
    kind: 'tool',
    path: 'tools/legacy/docs/ask.yaml',
    recipe: 'tool',
    text: 'version: "1.0.0"\ntool_type: mcp\nexecutor_id: rye/core/runtimes/http/http\ncategory: legacy/docs\ndescription: "Ask the docs server"\nconfig:\n  url: "http://127.0.0.1:9/ask"\n',
  },
  {
    kind: 'directive',
    path: 'directives/legacy/summarize.md',
    recipe: 'directive',
    text: '# Summarize\n\n```xml\n<directive name="summarize" version="1.0.0">\n  <metadata>\n    <description>Summarize.</description>\n    <category>legacy</category>\n    <author>acme</author>\n  </metadata>\n</directive>\n```\n\n<process><step name="s">Do it.</step></process>\n',
  },
  {
    kind: 'knowledge',
    path: 'knowledge/legacy/style.md',
    recipe: 'knowledge',
    text: '```yaml\nname: style\ntitle: Style\nentry_type: reference\nversion: "1.0.0"\ncategory: legacy\n```\n\n# Style\nShort lines.\n',
  },
  {
    kind: 'knowledge',
    path: 'knowledge/legacy/frontmatter.md',
    recipe: 'knowledge',
    text: '---\nname: frontmatter\ntitle: FM\nentry_type: reference\nversion: "1.0.0"\n---\n\n# FM\nBody.\n',
  },
  { kind: 'config', path: 'config/legacy/settings.yaml', recipe: 'tool', text: 'retries: 3\nmode: fast\n' },
];

describe('original RYE items and signatures', () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createWorkspace();
    for (const item of ITEMS) {
      const path = join(ws.project, '.ai', item.path);
      await mkdir(dirname(path), { recursive: true });
      const format = item.kind === 'config' ? FORMATS['.yaml']! : FORMATS[path.slice(path.lastIndexOf('.'))]!;
      await writeFile(path, originalSign(item.text, item.recipe, format, ws.userKey));
    }
  });

  const idOf = (path: string) => path.slice(path.indexOf('/') + 1, path.lastIndexOf('.'));

  it.each(ITEMS.filter((i) => i.kind === 'tool' || i.kind === 'config' || i.path.endsWith('style.md')))(
    'verifies $path (whole content covered)',
    async (item) => {
      const executor = await ws.executor();
      const { verification } = await executor.verifyItemFile(item.kind, idOf(item.path));
      expect(verification).toMatchObject({ outcome: 'ok', verified: true });
    },
  );

  it('runs the legacy Python tool (shebang before the signature)', async () => {
    const result = await (await ws.executor()).executeTool('legacy/text/wordcount', { text: 'a b c' });
    expect(result).toMatchObject({ status: 'success', data: { words: 3 } });
  });

  it.each(ITEMS.filter((i) => i.path.endsWith('summarize.md') || i.path.endsWith('frontmatter.md')))(
    'refuses $path (legacy signature leaves part uncovered), accepts it with RYE_ACCEPT_LEGACY_SIGNATURES=1',
    async (item) => {
      const strict = await ws.executor();
      await expect(strict.verifyItemFile(item.kind, idOf(item.path))).rejects.toThrow(
        /^Signature does not cover the whole file/,
      );
      const lenient = await ws.executor({ PATH: process.env.PATH, RYE_ACCEPT_LEGACY_SIGNATURES: '1' });
      const { verification } = await lenient.verifyItemFile(item.kind, idOf(item.path));
      expect(verification.verified).toBe(false);
      expect(verification.warnings[0]).toMatch(/^Signature does not cover the whole file/);
    },
  );
});
