import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rye, useTempProjects } from '../helpers.js';
import { REPO } from '../package-helpers.js';
import { outcomeOf, useGraphFixture } from './graph-fixture.js';

const fx = useGraphFixture();
const temp = useTempProjects();

describe('state graphs: the examples', () => {
  it('the graph rye init creates runs as shipped, and is the one the knowledge page shows', async () => {
    const t = await temp();
    const init = await rye(['init', '--project', t.project], { env: t.env });
    expect(init.json.signed).toContain('tool:example/graphs/greet_all');
    const run = await rye(
      [
        'execute',
        'tool:example/graphs/greet_all',
        '--params',
        '{"names": ["Ada", "Lin"]}',
        '--project',
        t.project,
      ],
      { env: t.env },
    );
    expect(run.code, run.stdout).toBe(0);
    const data = run.json.data as Record<string, unknown>;
    expect(data).toMatchObject({
      success: true,
      status: 'completed',
      steps: 3,
      output: {
        greetings: [
          { success: true, greeting: 'Hello, Ada!' },
          { success: true, greeting: 'Hello, Lin!' },
        ],
        note: 'more than one greeting',
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      },
    });
    const one = await rye(
      ['execute', 'tool:example/graphs/greet_all', '--params', '{"names": ["Ada"]}', '--project', t.project],
      { env: t.env },
    );
    expect((one.json.data as { output: unknown }).output).toMatchObject({ note: 'just one' });
    const page = readFileSync(join(REPO, 'packages/ryeos/.ai/knowledge/rye/core/graphs.md'), 'utf8');
    const shipped = readFileSync(join(t.project, '.ai/tools/example/graphs/greet_all.yaml'), 'utf8');
    expect(page).toContain(shipped.split('\n').slice(1).join('\n'));
  }, 120_000);

  it("the spec's example graph runs end to end against real tools (rye/bash and a project tool)", async () => {
    const f = fx();
    const dir = join(f.root, 'src');
    await import('node:fs').then((fs) => fs.mkdirSync(dir));
    await writeFile(join(dir, 'main.py'), 'print(1)\n');
    await f.graph(
      'acme/graphs/spec_example',
      `permissions: [rye.execute.tool.*]
env_requires: [PATH]
config_schema: {type: object, properties: {dir: {type: string, default: "."}}}
config:
  start: list_files
  max_steps: 20
  on_error: fail
  state: {seen: 0, items: [{path: main.py}, {path: gone.py}]}
  nodes:
    list_files:
      action: {primary: execute, item_type: tool, item_id: rye/bash, params: {command: "ls \${inputs.dir}"}}
      assign: {listing: "\${result.stdout}"}
      next: [{to: check_each, when: {path: state.listing, op: contains, value: ".py"}}, {to: done}]
    check_each:
      type: foreach
      over: "\${state.items}"
      as: item
      parallel: true
      action: {primary: execute, item_type: tool, item_id: acme/step, params: {label: "\${item.path}", log: "${f.log}"}}
      collect: results
      on_error: recover
      next: done
    recover: {type: gate, assign: {failed: true}, next: done}
    done: {type: return, output: {results: "\${state.results}", at: "\${_now}"}}
`,
    );
    const out = outcomeOf(await f.run('acme/graphs/spec_example', { dir }));
    expect(out, JSON.stringify(out)).toMatchObject({ success: true, status: 'completed', steps: 3 });
    const results = (out.output as { results: Array<{ label: string }> }).results;
    expect(results.map((r) => r.label)).toEqual(['main.py', 'gone.py']);
    expect(f.logged().sort()).toEqual(['gone.py', 'main.py']);
    // The unreachable recover node is reported by validate, and nothing runs.
    const report = outcomeOf(await f.run('acme/graphs/spec_example', { validate: true }));
    expect(report).toMatchObject({ success: true, node_count: 4 });
  }, 120_000);
});
