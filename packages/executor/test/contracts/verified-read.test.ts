/**
 * One verification path (issue 10, items 3–5): resolve → read once → verify, with the outcome a
 * typed field of the error, config allowed unsigned, and readers registered with the executor.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ItemReaders } from '../../src/index.js';
import {
  IntegrityError,
  isIntegrityFailure,
  loadItem,
  readVerifiedItem,
  signItems,
} from '../../src/index.js';
import { useWorkspaces } from '../security/helpers.js';

const workspace = useWorkspaces();

async function failure(run: Promise<unknown>): Promise<IntegrityError> {
  try {
    await run;
  } catch (error) {
    expect(error).toBeInstanceOf(IntegrityError);
    return error as IntegrityError;
  }
  throw new Error('expected an integrity failure');
}

describe('readVerifiedItem', () => {
  it('returns the bytes it verified, and the outcome of a failure as a typed field', async () => {
    const ws = await workspace();
    const path = await ws.write(
      'project',
      'knowledge/acme/note.md',
      '---\nname: note\ncategory: acme\n---\nHello\n',
    );
    const executor = await ws.executor();
    const read = await readVerifiedItem(executor, 'knowledge', 'acme/note');
    expect(read.bytes.equals(readFileSync(path))).toBe(true);
    expect(read.text).toBe(readFileSync(path, 'utf8'));
    expect(read.verification).toMatchObject({ outcome: 'ok', verified: true });

    writeFileSync(path, `${readFileSync(path, 'utf8')}tampered\n`);
    const modified = await failure(readVerifiedItem(executor, 'knowledge', 'acme/note'));
    expect(modified.outcome).toBe('modified');
    expect(modified.code).toBe('INTEGRITY');
    expect(isIntegrityFailure(modified, 'modified')).toBe(true);
    expect(isIntegrityFailure(modified, 'unsigned')).toBe(false);

    await ws.write('project', 'knowledge/acme/bare.md', '---\nname: bare\n---\nx\n', null);
    expect((await failure(readVerifiedItem(executor, 'knowledge', 'acme/bare'))).outcome).toBe('unsigned');
  });

  it('config may be unsigned (with a warning); a tampered config is still refused', async () => {
    const ws = await workspace();
    await ws.write('project', 'config/acme/plain.yaml', 'retries: 3\n', null);
    const signed = await ws.write('project', 'config/acme/signed.yaml', 'retries: 4\n');
    const executor = await ws.executor();
    const plain = await readVerifiedItem(executor, 'config', 'acme/plain', { allowUnsigned: true });
    expect(plain.verification.outcome).toBe('unsigned');
    expect(plain.verification.warnings.join()).toMatch(/Unsigned config file/);
    writeFileSync(signed, readFileSync(signed, 'utf8').replace('retries: 4', 'retries: 9'));
    const refused = await failure(
      readVerifiedItem(executor, 'config', 'acme/signed', { allowUnsigned: true }),
    );
    expect(refused.outcome).toBe('modified');
  });

  it('a moved item is caught through the kind reader registered with the executor', async () => {
    const ws = await workspace();
    // Declares category "elsewhere" but lives under acme/: signed, yet moved.
    await ws.write('project', 'knowledge/acme/moved.md', '---\nname: moved\ncategory: elsewhere\n---\nx\n');
    const readers: ItemReaders = {
      knowledge: {
        facts: (text) => ({ name: 'moved', category: /category: (\S+)/.exec(text)?.[1] }),
      },
    };
    const plain = await ws.executor();
    // Without a reader nothing says what the item declares: it verifies.
    expect((await loadItem(plain, { kind: 'knowledge', id: 'acme/moved' })).status).toBe('success');
    const withReader = { ...plain, kinds: plain.kinds, readers };
    expect((await failure(loadItem(withReader, { kind: 'knowledge', id: 'acme/moved' }))).outcome).toBe(
      'moved',
    );
  });
});

describe('signItems reports each failure with its code', () => {
  it('failures carry error_type; the system space is refused in one place', async () => {
    const ws = await workspace();
    const executor = await ws.executor();
    const none = await signItems(executor, 'tool:nope/*', { keyPair: ws.userKey, env: process.env });
    expect(none.failed).toEqual([
      expect.objectContaining({ item_id: 'tool:nope/*', error_type: 'not_found' }),
    ]);
    await ws.write('project', 'tools/acme/bad.py', '__version__ = "one"\n__executor_id__ = "x"\n', null);
    const bad = await signItems(executor, 'tool:acme/bad', { keyPair: ws.userKey, env: process.env });
    expect(bad.failed[0]).toMatchObject({ error_type: 'validation' });
    await expect(
      signItems(executor, 'tool:x', { keyPair: ws.userKey, env: process.env, space: 'system' }),
    ).rejects.toMatchObject({
      code: 'PERMISSION',
    });
  });
});
