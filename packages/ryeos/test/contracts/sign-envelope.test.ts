/** `Rye.sign` answers with an envelope like its siblings, never a throw (issue 10, item 3). */
import { describe, expect, it } from 'vitest';
import { createRye } from '../../src/index.js';
import { tempProject } from '../helpers.js';

describe('Rye.sign', () => {
  it('success, partial and error are envelopes whose failures keep their codes', async () => {
    const t = await tempProject();
    const rye = createRye({ projectPath: t.project, env: { USER_SPACE: t.user } });

    const noKey = await rye.sign('tool:acme/*');
    expect(noKey).toMatchObject({ status: 'error', error_type: 'config', total: 0 });
    expect(String(noKey.error)).toMatch(/No signing keypair/);

    await rye.generateKeys();
    await t.write(
      'tools/acme/good.sh',
      '# __version__ = "1.0.0"\n# __executor_id__ = "rye/core/runtimes/bash/bash"\n# __category__ = "acme"\necho hi\n',
    );
    await t.write('tools/acme/bad.sh', '# __version__ = "one"\necho hi\n');
    const partial = await rye.sign('tool:acme/*');
    expect(partial).toMatchObject({ status: 'partial', total: 2, summary: '1 signed, 1 failed' });
    expect(partial.failed).toEqual([
      expect.objectContaining({ item_id: 'tool:acme/bad', error_type: 'validation' }),
    ]);

    expect(await rye.sign(['tool:acme/good'])).toMatchObject({ status: 'success', total: 1 });
    expect(await rye.sign('tool:acme/good', { space: 'system' })).toMatchObject({
      status: 'error',
      error_type: 'permission',
      error: "Cannot sign in 'system' space",
    });
    expect(await rye.sign('tool:nothing/here')).toMatchObject({ status: 'error', error_type: 'not_found' });
  });
});
