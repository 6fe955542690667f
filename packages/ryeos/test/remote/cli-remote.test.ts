/** `rye remote …` as a user runs it: the built CLI, real files, no server needed. */
import { describe, expect, it } from 'vitest';
import { rye, tempProject } from '../helpers.js';

describe('rye remote', () => {
  it('add, then list: the remote, its key variable and whether it is set (never its value)', async () => {
    const t = await tempProject();
    const added = await rye(
      ['remote', 'add', 'gpu', 'http://127.0.0.1:8321', '--key-env', 'RYE_GPU_API_KEY'],
      {
        cwd: t.project,
        env: t.env,
      },
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.json).toMatchObject({ status: 'success', name: 'gpu', url: 'http://127.0.0.1:8321/' });
    const key = `rye_sk_${'b'.repeat(43)}`;
    const listed = await rye(['remote', 'list'], { cwd: t.project, env: { ...t.env, RYE_GPU_API_KEY: key } });
    expect(listed.json).toMatchObject({
      status: 'success',
      project_name: 'project',
      remotes: [{ name: 'gpu', key_env: 'RYE_GPU_API_KEY', key_set: true, pinned_fingerprint: null }],
    });
    expect(listed.stdout).not.toContain(key);
  });

  it('an unknown action says what exists; help lists the actions', async () => {
    const t = await tempProject();
    const wrong = await rye(['remote', 'pusj'], { cwd: t.project, env: t.env });
    expect(wrong.code).toBe(1);
    expect(wrong.json).toMatchObject({ status: 'error', error: "Unknown remote action 'pusj'" });
    expect(String(wrong.json.hint)).toContain('Did you mean rye remote push?');
    const help = await rye(['help', 'remote'], { cwd: t.project, env: t.env });
    expect(help.stdout).toMatch(/rye remote add <name> <url>/);
    expect(help.stdout).toMatch(/trust NAME/);
  });

  it('a push with no remote configured: one clear error naming the fix', async () => {
    const t = await tempProject();
    const push = await rye(['remote', 'push'], { cwd: t.project, env: t.env });
    expect(push.code).toBe(1);
    expect(push.json).toMatchObject({
      status: 'error',
      error_type: 'not_found',
      error: "Unknown remote 'default': no remote is configured.",
    });
  });
});
