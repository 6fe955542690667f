/**
 * `rye init` (interfaces §8, DECISIONS 27): a user space with a signing key that it trusts, and
 * a project `.ai/` with an example tool, directive and knowledge item, signed. Idempotent:
 * existing files are never overwritten, an existing key is kept.
 */
import { existsSync, realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { SignFailure } from '@ryeos/executor';
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
  /** Files init wrote but could not sign (each with the reason). */
  failed?: SignFailure[];
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

/** A complete state graph over the example tool; knowledge:rye/core/graphs walks through it. */
export const EXAMPLE_GRAPH = `version: "1.0.0"
tool_type: graph
executor_id: rye/core/runtimes/state-graph/runtime
category: example/graphs
description: "Greet everyone on a list, then report: a starting point for your own graphs"
permissions: [rye.execute.tool.example.*]
config_schema:
  type: object
  properties:
    names: {type: array, items: {type: string}, default: [Ada, Grace]}
config:
  start: greet_each
  max_steps: 10
  on_error: fail
  state: {greeted: 0}
  nodes:
    greet_each:
      type: foreach
      over: "\${inputs.names}"
      as: name
      parallel: true
      action: {item_id: "tool:example/hello", params: {name: "\${name}"}}
      collect: greetings
      next:
        - {to: many, when: {path: state.greetings.1, op: exists}}
        - {to: done}
    many:
      type: gate
      assign: {note: "more than one greeting"}
      next: done
    done:
      type: return
      output: {greetings: "\${state.greetings}", note: "\${state.note || 'just one'}", at: "\${_now}"}
`;

const EXAMPLES: [string, string][] = [
  ['tools/example/hello.js', EXAMPLE_TOOL],
  ['tools/example/graphs/greet_all.yaml', EXAMPLE_GRAPH],
  ['directives/example/greet.md', EXAMPLE_DIRECTIVE],
  ['knowledge/example/about.md', EXAMPLE_KNOWLEDGE],
  ['.gitignore', 'state/\n'],
];

/**
 * Whether a file written at `path` stays inside `root` once symlinks are resolved: a cloned
 * repository could make `.ai/tools/example` a link into the user's own space.
 */
function landsInside(path: string, project: string): boolean {
  try {
    const root = join(realpathSync(project), '.ai');
    let existing = dirname(path);
    while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
    const real = realpathSync(existing);
    // Not created yet: the nearest existing ancestor is the project itself.
    return real === root || real.startsWith(root + sep) || real === dirname(root);
  } catch {
    return false;
  }
}

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
  const failed: NonNullable<InitResult['failed']> = [];
  if (options.userOnly) return result;
  result.project = rye.projectPath;
  await mkdir(rye.projectPath, { recursive: true });
  const created = new Set<string>();
  for (const [relative, text] of EXAMPLES) {
    const path = join(rye.projectPath, '.ai', relative);
    if (existsSync(path) || !landsInside(path, rye.projectPath)) {
      result.kept.push(path);
      continue;
    }
    await writeFileAtomic(path, text, { mkdirs: true });
    result.created.push(path);
    created.add(relative);
  }
  // Only the files init wrote in this run are signed, by their exact paths: a user's own files
  // (or a planted example/hello.py beside the hello.js we wrote) are never signed with their key.
  for (const [relative] of EXAMPLES) {
    if (!created.has(relative) || relative === '.gitignore') continue;
    const signed = await rye.sign(join(rye.projectPath, '.ai', relative));
    if (signed.status === 'signed') result.signed.push(signed.item_id);
    // An item's own failure names the item; one of the whole call (no key, say) names the file.
    else if (signed.status === 'error') {
      const item_id = signed.path ? String(signed.item_id) : relative;
      failed.push({ item_id, error: signed.error, error_type: signed.error_type });
    }
  }
  if (failed.length) result.failed = failed;
  return result;
}
