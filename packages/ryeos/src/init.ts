/**
 * `rye init` (interfaces §8, DECISIONS 27): a user space with a signing key that it trusts, and
 * a project `.ai/` with an example tool, directive and knowledge item, signed. Idempotent:
 * existing files are never overwritten, an existing key is kept.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '@ryeos/lillux';
import type { Rye } from './rye.js';

export interface InitResult {
  status: 'success';
  user_space: string;
  key: { fingerprint: string; created: boolean; trusted_at: string };
  project?: string;
  created: string[];
  kept: string[];
  signed: string[];
}

const EXAMPLE_TOOL = `export const __version__ = "1.0.0";
export const __tool_type__ = "javascript";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "example";
export const __tool_description__ = "Greet someone: a starting point for your own tools";
export const CONFIG_SCHEMA = {
  type: "object",
  properties: { name: { type: "string", description: "Who to greet" } },
};

// Parameters arrive as JSON on stdin; print exactly one JSON object on stdout.
let raw = "";
for await (const chunk of process.stdin) raw += chunk;
const { name = "world" } = JSON.parse(raw || "{}");
console.log(JSON.stringify({ success: true, greeting: \`Hello, \${name}!\` }));
`;

const EXAMPLE_DIRECTIVE = `# Greet

\`\`\`xml
<directive name="greet" version="1.0.0">
  <metadata>
    <description>Greet someone with the example tool and report what it said.</description>
    <category>example</category>
    <author>you</author>
    <permissions>
      <execute><tool>example.*</tool></execute>
    </permissions>
  </metadata>
  <inputs>
    <input name="name" type="string" default="world">Who to greet</input>
  </inputs>
  <outputs>
    <output name="greeting">What the tool said</output>
  </outputs>
</directive>
\`\`\`

<process>
  <step name="greet">Execute tool:example/hello with parameters {"name": "{input:name}"}.</step>
  <step name="report">Tell the user the greeting the tool returned.</step>
</process>
`;

const EXAMPLE_KNOWLEDGE = `\`\`\`yaml
name: about
title: About this project's .ai/ directory
entry_type: reference
version: "1.0.0"
category: example
tags: [example, getting-started]
\`\`\`

# About this project's \`.ai/\`

- \`tools/\` holds tools (scripts or YAML) the agent can run: \`execute tool:example/hello\`.
- \`directives/\` holds instructions the agent follows: \`execute directive:example/greet\`.
- \`knowledge/\` holds context like this page: \`execute knowledge:example/about\`.

Every item is signed. After editing one, sign it again: \`rye sign tool:example/hello\`.
`;

const EXAMPLES: [string, string][] = [
  ['tools/example/hello.js', EXAMPLE_TOOL],
  ['directives/example/greet.md', EXAMPLE_DIRECTIVE],
  ['knowledge/example/about.md', EXAMPLE_KNOWLEDGE],
  ['.gitignore', 'state/\n'],
];

const REFS = ['tool:example/hello', 'directive:example/greet', 'knowledge:example/about'];

export async function initWorkspace(rye: Rye, options: { userOnly?: boolean } = {}): Promise<InitResult> {
  const key = await rye.generateKeys();
  const result: InitResult = {
    status: 'success',
    user_space: rye.userSpace,
    key: { fingerprint: key.fingerprint, created: key.created, trusted_at: key.trusted_at },
    created: [],
    kept: [],
    signed: [],
  };
  if (options.userOnly) return result;
  result.project = rye.projectPath;
  const created = new Set<string>();
  for (const [relative, text] of EXAMPLES) {
    const path = join(rye.projectPath, '.ai', relative);
    if (existsSync(path)) {
      result.kept.push(path);
      continue;
    }
    await writeFileAtomic(path, text, { mkdirs: true });
    result.created.push(path);
    created.add(relative);
  }
  // Only the files init wrote are signed: a user's own files are never touched.
  for (const ref of REFS) {
    const [kind, id] = ref.split(':') as [string, string];
    const dir = kind === 'tool' ? 'tools' : kind === 'directive' ? 'directives' : 'knowledge';
    if (![...created].some((rel) => rel.startsWith(`${dir}/${id}.`))) continue;
    const signed = await rye.sign(ref);
    result.signed.push(...signed.signed.map((s) => s.item_id));
  }
  return result;
}
