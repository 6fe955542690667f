/**
 * Corpus of directives and knowledge in the original RYE format (spec items §2.2–2.3). Every
 * item file under test/corpus/{directives,knowledge} has a `<stem>.expected.json` next to it
 * holding the parsed structure (directives: everything but `raw`, and `content` only when the
 * expectation lists it; knowledge: everything but `raw`).
 *
 * Files are read the way spec items §2 says items are read: UTF-8 with newline normalisation
 * (CRLF and lone CR → LF) before parsing, so the CRLF files parse like their LF twins.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { normalizeNewlines } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { parseDirective, parseKnowledge } from '../src/index.js';

const CORPUS = join(dirname(fileURLToPath(import.meta.url)), 'corpus');
const EXPECTED = '.expected.json';
const ITEM_EXTENSIONS: Record<string, RegExp> = {
  directives: /\.md$/,
  knowledge: /\.(md|ya?ml)$/,
};

interface CorpusFile {
  kind: 'directives' | 'knowledge';
  file: string;
  stem: string;
  path: string;
  expectedPath: string;
}

function corpusFiles(): CorpusFile[] {
  const files: CorpusFile[] = [];
  for (const kind of ['directives', 'knowledge'] as const) {
    for (const file of readdirSync(join(CORPUS, kind)).sort()) {
      if (file.endsWith(EXPECTED)) continue;
      const stem = file.replace(/\.[^.]+$/, '');
      files.push({
        kind,
        file,
        stem,
        path: join(CORPUS, kind, file),
        expectedPath: join(CORPUS, kind, `${stem}${EXPECTED}`),
      });
    }
  }
  return files;
}

function readItem(path: string): string {
  return normalizeNewlines(readFileSync(path, 'utf8'));
}

const files = corpusFiles();

describe('corpus layout', () => {
  it('holds at least 30 item files', () => {
    expect(files.length).toBeGreaterThanOrEqual(30);
  });

  it('holds only item files and their expectations', () => {
    for (const kind of ['directives', 'knowledge'] as const) {
      for (const file of readdirSync(join(CORPUS, kind))) {
        if (file.endsWith(EXPECTED)) {
          const stem = file.slice(0, -EXPECTED.length);
          const items = files.filter((f) => f.kind === kind && f.stem === stem);
          expect(
            items.map((f) => f.file),
            `${kind}/${file} has no item file`,
          ).toHaveLength(1);
        } else {
          expect(file, `${kind}/${file} is not a ${kind} item file`).toMatch(ITEM_EXTENSIONS[kind]!);
        }
      }
    }
  });

  it('has an expectation for every item file', () => {
    const missing = files.filter((f) => !existsSync(f.expectedPath)).map((f) => `${f.kind}/${f.file}`);
    expect(missing).toEqual([]);
  });

  it('keeps the CRLF files CRLF on disk', () => {
    for (const file of ['directives/windows_line_endings.md', 'knowledge/crlf-knowledge.md']) {
      const raw = readFileSync(join(CORPUS, file), 'utf8');
      expect(raw, file).toContain('\r\n');
      expect(raw.replace(/\r\n/g, ''), file).not.toContain('\n');
    }
  });
});

describe.each(files.filter((f) => f.kind === 'directives'))('directive $file', (f) => {
  it('parses to the expected structure', () => {
    expect(existsSync(f.expectedPath), `missing ${f.kind}/${f.stem}${EXPECTED}`).toBe(true);
    const text = readItem(f.path);
    const expected = JSON.parse(readFileSync(f.expectedPath, 'utf8')) as Record<string, unknown>;
    expect(expected).not.toHaveProperty('raw');
    const { raw, content, ...parsed } = parseDirective(text, `corpus/directives/${f.file}`);
    expect(raw).toBe(text);
    const { content: expectedContent, ...rest } = expected;
    if (expectedContent !== undefined) expect(content).toBe(expectedContent);
    expect(parsed).toStrictEqual(rest);
  });
});

describe.each(files.filter((f) => f.kind === 'knowledge'))('knowledge $file', (f) => {
  it('parses to the expected structure', () => {
    expect(existsSync(f.expectedPath), `missing ${f.kind}/${f.stem}${EXPECTED}`).toBe(true);
    const text = readItem(f.path);
    const expected = JSON.parse(readFileSync(f.expectedPath, 'utf8')) as Record<string, unknown>;
    expect(expected).not.toHaveProperty('raw');
    const { raw, ...parsed } = parseKnowledge(
      text,
      `corpus/knowledge/${f.file}`,
      `corpus/knowledge/${f.stem}`,
    );
    expect(raw).toBe(text);
    expect(parsed).toStrictEqual(expected);
  });
});

const SIG =
  '<!-- rye:signed:2026-01-01T00:00:00Z:' +
  '0123456789abcdef'.repeat(4) +
  ':' +
  'A1b2C3d4E5f6G7h8-_'.repeat(4) +
  'Q1w2E3r4I5o6P7' +
  '==:0011223344556677 -->';

/** The message of the error `fn` throws. */
function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a parse error');
}

describe('malformed directives', () => {
  it('without an xml fence: No XML code block found', () => {
    const text = `${SIG}\n# Title\n\nJust instructions, no metadata.\n`;
    expect(errorOf(() => parseDirective(text, 'bad/no_fence.md'))).toBe(
      'Invalid directive bad/no_fence.md: No XML code block found',
    );
  });

  it('with an unclosed xml fence: No XML code block found', () => {
    const text = `${SIG}\n\`\`\`xml\n<directive name="open" version="1.0.0" />\n\nBody without a closing fence.\n`;
    expect(errorOf(() => parseDirective(text, 'bad/unclosed.md'))).toBe(
      'Invalid directive bad/unclosed.md: No XML code block found',
    );
  });

  it('with the only xml fence inside an outer fence: No XML code block found', () => {
    const text = `${SIG}\n\`\`\`\`markdown\n\`\`\`xml\n<directive name="x" />\n\`\`\`\n\`\`\`\`\n`;
    expect(errorOf(() => parseDirective(text, 'bad/hidden.md'))).toBe(
      'Invalid directive bad/hidden.md: No XML code block found',
    );
  });

  it('with mismatched tags: Invalid XML at the file line', () => {
    const text = [
      SIG, // 1
      '# Broken', // 2
      '', // 3
      '```xml', // 4
      '<directive name="broken" version="1.0.0">', // 5
      '  <metadata>', // 6
      '    <description>oops</metadata>', // 7
      '</directive>',
      '```',
      '',
      'Body.',
    ].join('\n');
    const message = errorOf(() => parseDirective(text, 'bad/broken.md'));
    expect(message).toMatch(/^Invalid directive bad\/broken\.md:7: Invalid XML: /);
    expect(message).toContain('close tag');
  });

  it('with an unquoted attribute: Invalid XML at the file line', () => {
    const text = `${SIG}\n\n\`\`\`xml\n<directive name="q" version="1.0.0">\n  <inputs>\n    <input name=topic />\n  </inputs>\n</directive>\n\`\`\`\n`;
    expect(errorOf(() => parseDirective(text, 'bad/unquoted.md'))).toMatch(
      /^Invalid directive bad\/unquoted\.md:6: Invalid XML: .*attribute/,
    );
  });

  it('with a bare `<` outside <template>: Invalid XML', () => {
    const text = `${SIG}\n\`\`\`xml\n<directive name="lt" version="1.0.0">\n  <description>when a < b</description>\n</directive>\n\`\`\`\n`;
    expect(errorOf(() => parseDirective(text, 'bad/lt.md'))).toMatch(
      /^Invalid directive bad\/lt\.md:4: Invalid XML: /,
    );
  });

  it('with a root element other than <directive>', () => {
    const text = `${SIG}\n\`\`\`xml\n<tool name="not_a_directive" version="1.0.0">\n</tool>\n\`\`\`\n`;
    expect(errorOf(() => parseDirective(text, 'bad/root.md'))).toBe(
      'Invalid directive bad/root.md:3: <tool>: expected the root element to be <directive>',
    );
  });

  it('without a name attribute', () => {
    const text = `${SIG}\n\n\`\`\`xml\n<directive version="1.0.0">\n  <description>Nameless.</description>\n</directive>\n\`\`\`\n`;
    const message = errorOf(() => parseDirective(text, 'bad/nameless.md'));
    expect(message).toMatch(/^Invalid directive bad\/nameless\.md:4: <directive>: /);
    expect(message).toContain('name attribute');
  });

  it('with an unknown tag inside <permissions>, listing the valid tags', () => {
    const text = [
      SIG, // 1
      '```xml', // 2
      '<directive name="perms" version="1.0.0">', // 3
      '  <metadata>', // 4
      '    <permissions>', // 5
      '      <execute>*</execute>', // 6
      '      <write>files.*</write>', // 7
      '    </permissions>',
      '  </metadata>',
      '</directive>',
      '```',
    ].join('\n');
    const message = errorOf(() => parseDirective(text, 'bad/perms.md'));
    expect(message).toMatch(/^Invalid directive bad\/perms\.md:7: <write>: /);
    expect(message).toMatch(/unknown tag inside <permissions>/i);
    const valid = /Valid tags: (.*)$/.exec(message)?.[1]?.split(/,\s*/) ?? [];
    expect(valid.sort()).toEqual(['acknowledge', 'execute', 'fetch', 'load', 'search', 'sign']);
  });

  it('with an <input> that has no name', () => {
    const text = [
      SIG, // 1
      '```xml', // 2
      '<directive name="inputs" version="1.0.0">', // 3
      '  <inputs>', // 4
      '    <input name="fine" />', // 5
      '    <input type="string">Nameless input</input>', // 6
      '  </inputs>',
      '</directive>',
      '```',
    ].join('\n');
    const message = errorOf(() => parseDirective(text, 'bad/inputs.md'));
    expect(message).toMatch(/^Invalid directive bad\/inputs\.md:6: <input>: /);
    expect(message).toContain('name attribute');
  });

  it('with an <output> that has no name', () => {
    const text = `${SIG}\n\`\`\`xml\n<directive name="outs" version="1.0.0">\n  <outputs>\n    <output type="string" />\n  </outputs>\n</directive>\n\`\`\`\n`;
    const message = errorOf(() => parseDirective(text, 'bad/outputs.md'));
    expect(message).toMatch(/^Invalid directive bad\/outputs\.md:5: <output>: /);
    expect(message).toContain('name attribute');
  });
});

describe('malformed knowledge', () => {
  it('reports the file line of bad YAML in a ```yaml fence', () => {
    const text = [
      SIG, // 1
      '```yaml', // 2
      'name: dup', // 3
      'title: One', // 4
      'title: Two', // 5
      '```',
      '',
      'Body.',
    ].join('\n');
    expect(errorOf(() => parseKnowledge(text, 'bad/dup.md', 'bad/dup'))).toMatch(
      /^Invalid knowledge bad\/dup\.md:5: metadata is not valid YAML: Map keys must be unique/,
    );
  });

  it('counts blank lines before the fence', () => {
    const text = [
      SIG, // 1
      '', // 2
      '```yaml', // 3
      'name: nested', // 4
      'title: a: b', // 5
      '```',
    ].join('\n');
    expect(errorOf(() => parseKnowledge(text, 'bad/nested.md', 'bad/nested'))).toMatch(
      /^Invalid knowledge bad\/nested\.md:5: metadata is not valid YAML: /,
    );
  });

  it('reports the file line of bad YAML in front matter', () => {
    const text = ['---', 'name: tabs', 'tags:', '\t- a', '---', 'Body.'].join('\n');
    expect(errorOf(() => parseKnowledge(text, 'bad/tabs.md', 'bad/tabs'))).toMatch(
      /^Invalid knowledge bad\/tabs\.md:4: metadata is not valid YAML: Tabs/,
    );
  });

  it('reports the file line of bad YAML in a pure .yaml file after the signature', () => {
    const text = [SIG, 'name: pure', 'title: Pure', 'list:', '  - a', ' - b', ''].join('\n');
    expect(errorOf(() => parseKnowledge(text, 'bad/pure.yaml', 'bad/pure'))).toMatch(
      /^Invalid knowledge bad\/pure\.yaml:6: metadata is not valid YAML: /,
    );
  });

  it('rejects metadata that is not a mapping', () => {
    const text = ['```yaml', '- just', '- a list', '```', 'Body.'].join('\n');
    expect(errorOf(() => parseKnowledge(text, 'bad/list.md', 'bad/list'))).toBe(
      'Invalid knowledge bad/list.md:2: metadata must be a YAML mapping',
    );
  });
});
