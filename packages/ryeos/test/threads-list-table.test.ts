/**
 * `rye threads list` and `show` for a person (issue 33, point 2): on a terminal (a real pty, from
 * `script`) they print a table with each child under its parent and the subtree's spend; through
 * a pipe, or with `--json`, they print the JSON they always did.
 */
import { spawn } from 'node:child_process';
import { openThreadStore, threadsStateRoot } from '@ryeos/threads';
import { describe, expect, it } from 'vitest';
import { CLI, rye as ryeCli } from './helpers.js';
import { LOOK_SCRIPT, type ThreadFixture, useLookFixture } from './threads-helpers.js';

const fixture = useLookFixture();

/** Runs the CLI with its stdout on a pseudo-terminal (util-linux `script`), as a person would. */
function ryeOnTerminal(fx: ThreadFixture, args: string[]): Promise<{ code: number | null; out: string }> {
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      env: { PATH: process.env.PATH ?? '', TERM: 'dumb', ...fx.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out: out.replaceAll('\r\n', '\n') }));
  });
}

/** Three threads under a real, signed one: two children (one with a child of its own). */
async function plantChildren(fx: ThreadFixture, parent: string): Promise<void> {
  const store = openThreadStore(threadsStateRoot(fx.project));
  try {
    const plant = async (id: string, parentId: string, spend: number, model: string) => {
      await store.registry.register(id, 'acme/kid', parentId);
      await store.registry.setModel(id, model);
      await store.registry.updateStatus(id, 'completed');
      await store.registry.updateCostSnapshot(id, {
        turns: 2,
        input_tokens: 100,
        output_tokens: 20,
        spend,
        elapsed_seconds: 1,
      });
    };
    await plant('acme/kid/kid-1000000000001', parent, 0.001, 'claude-kid');
    await plant('acme/kid/kid-1000000000002', parent, 0.0005, 'claude-kid\u001b[2J');
    await plant('acme/kid/kid-1000000000003', 'acme/kid/kid-1000000000001', 0.0002, 'claude-kid');
  } finally {
    await store.close();
  }
}

async function runLook(fx: ThreadFixture): Promise<{ id: string; spend: number }> {
  await fx.serve(LOOK_SCRIPT);
  const reply = await fx.rye.execute({ item_id: 'directive:acme/look', thread: 'fork' });
  expect(reply.status, JSON.stringify(reply)).toBe('success');
  const id = String(reply.thread_id);
  const listed = await ryeCli(['threads', 'list', '--project', fx.project], { env: fx.env });
  const row = (listed.json.threads as Array<{ thread_id: string; cost: { spend: number } }>).find(
    (t) => t.thread_id === id,
  );
  return { id, spend: row!.cost.spend };
}

describe('rye threads list on a terminal', () => {
  it('prints a tree of parent and children with the subtree spend; a pipe and --json still get JSON', async () => {
    const fx = fixture();
    const { id, spend } = await runLook(fx);
    await plantChildren(fx, id);

    const shown = await ryeOnTerminal(fx, ['threads', 'list', '--project', fx.project]);
    expect(shown.code, shown.out).toBe(0);
    const lines = shown.out.split('\n');
    expect(lines[0]).toMatch(/^THREAD\s+STATUS\s+MODEL\s+TURNS\s+TOKENS\s+SPEND\s+SUBTREE\s+UPDATED$/);
    const parentLine = lines.find((l) => l.startsWith(id))!;
    const subtree = spend + 0.001 + 0.0005 + 0.0002;
    expect(parentLine).toContain(`$${subtree.toFixed(4)}`);
    expect(shown.out).toMatch(/\n├─ acme\/kid\/kid-1000000000001 +completed .* \$0\.0010 +\$0\.0012 /);
    expect(shown.out).toMatch(/\n│ {2}└─ acme\/kid\/kid-1000000000003 +completed/);
    expect(shown.out).toMatch(/\n└─ acme\/kid\/kid-1000000000002 +completed/);
    // What the registry says is shown as text, never as terminal control.
    expect(shown.out).toContain('claude-kid\\u001b[2J');
    expect(shown.out).not.toContain('\u001b[2J');
    expect(shown.out).toContain(`4 threads, $${subtree.toFixed(4)} spent in all`);

    const piped = await ryeCli(['threads', 'list', '--project', fx.project], { env: fx.env });
    expect(piped.json).toMatchObject({ status: 'success', count: 4 });
    const asked = await ryeOnTerminal(fx, ['threads', 'list', '--json', '--project', fx.project]);
    expect(JSON.parse(asked.out)).toMatchObject({ status: 'success', count: 4 });
  }, 60_000);
});

describe('rye threads show on a terminal', () => {
  it("prints the thread's fields, whether its records verify, and its descendants with the subtree spend", async () => {
    const fx = fixture();
    const { id, spend } = await runLook(fx);
    await plantChildren(fx, id);

    const shown = await ryeOnTerminal(fx, ['threads', 'show', id, '--project', fx.project]);
    expect(shown.code, shown.out).toBe(0);
    expect(shown.out).toMatch(new RegExp(`^thread +${id.replaceAll('/', '\\/')}\n`));
    expect(shown.out).toMatch(/\nstatus +completed\n/);
    expect(shown.out).toMatch(/\nrecords +signed records verify\n/);
    expect(shown.out).toContain(`subtree spend  $${(spend + 0.0017).toFixed(4)}`);
    expect(shown.out).toMatch(/\nchildren\nTHREAD +STATUS/);
    expect(shown.out).toMatch(/\nacme\/kid\/kid-1000000000001 .*\n└─ acme\/kid\/kid-1000000000003 /);

    const piped = await ryeCli(['threads', 'show', id, '--project', fx.project], { env: fx.env });
    expect(piped.json).toMatchObject({ status: 'success', thread_status: 'completed', thread_id: id });
  }, 60_000);
});
