import { spawnSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOperations, createRye } from '../src/index.js';
import { MCP_SERVER, rye, tempProject } from './helpers.js';

const context = () => ({ signal: new AbortController().signal });

describe('facade hardening', () => {
  it('ryeos-mcp refuses a non-loopback --host without --allow-remote', () => {
    const run = spawnSync(process.execPath, [MCP_SERVER, '--http', '--host', '0.0.0.0', '--port', '0'], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/refusing to listen on 0\.0\.0\.0: anyone who can reach it could run tools/);
  });

  it('mistyped MCP arguments are validation errors, not silently ignored', async () => {
    const t = await tempProject();
    const ops = createOperations({ userSpace: t.user });
    const result = await ops.execute(
      { project_path: t.project, item_id: 'tool:x', parameters: '{"a":1}' },
      context(),
    );
    expect(result).toMatchObject({
      status: 'error',
      error_type: 'validation',
      error: 'parameters must be an object, got "{\\"a\\":1}"',
    });
    const search = await ops.search(
      { project_path: t.project, scope: 'tool', query: 'x', limit: '5' },
      context(),
    );
    expect(search.error).toMatch(/^limit must be an integer/);
  });

  it('a broken bundles.yaml names the file, and fixing it recovers without a restart', async () => {
    const t = await tempProject();
    await mkdir(join(t.user, '.ai', 'config'), { recursive: true });
    const bundles = join(t.user, '.ai', 'config', 'bundles.yaml');
    await writeFile(bundles, 'bundles: [unclosed\n');
    const api = createRye({ projectPath: t.project, userSpace: t.user });
    const broken = await api.execute({ item_id: 'tool:rye/core/keys/keys', dry_run: true });
    expect(broken).toMatchObject({ status: 'error', error_type: 'config' });
    expect(broken.error).toContain(bundles);
    await rm(bundles);
    expect(
      await api.execute({
        item_id: 'tool:rye/core/keys/keys',
        parameters: { action: 'list' },
        dry_run: true,
      }),
    ).toMatchObject({ status: 'validation_passed' });
  });

  it('load reads config items; -p is the project path on every verb', async () => {
    const t = await tempProject();
    await t.write('config/agent/settings.yaml', 'retries: 3\n');
    const loaded = await rye(['load', 'config:agent/settings', '-p', t.project], { env: t.env });
    expect(loaded.json).toMatchObject({
      status: 'success',
      item_id: 'config:agent/settings',
      content: 'retries: 3\n',
    });
  });
});
