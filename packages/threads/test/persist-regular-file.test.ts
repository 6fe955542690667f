/**
 * Thread records are read only as regular files reached without a link, within a size bound
 * (attack round on issue 33, finding 2): a repository can plant a link to /dev/zero, a FIFO or a
 * link to a file outside the project where thread.json or transcript.jsonl should be.
 */
import { execFileSync } from 'node:child_process';
import { symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readThreadJson } from '../src/persistence/thread-json.js';
import { readTranscript } from '../src/persistence/transcript-read.js';
import { verifyTranscript } from '../src/persistence/transcript-verify.js';
import { tempDirs, testKey } from './persist-helpers.js';

const dirs = tempDirs();
afterEach(() => dirs.cleanup());

describe('thread records as regular files', () => {
  it('refuses thread.json linked to /dev/zero or planted as a FIFO, with a typed error and at once', async () => {
    const { trust } = testKey();
    const linked = await dirs.make();
    symlinkSync('/dev/zero', join(linked, 'thread.json'));
    await expect(readThreadJson(linked, trust)).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: expect.stringMatching(/symbolic link/),
    });
    const fifo = await dirs.make();
    execFileSync('mkfifo', [join(fifo, 'thread.json')]);
    await expect(readThreadJson(fifo, trust)).rejects.toMatchObject({
      code: 'INTEGRITY',
      message: expect.stringMatching(/special file/),
    });
  });

  it('refuses a transcript linked elsewhere, and one past the size bound', async () => {
    const { trust } = testKey();
    const dir = await dirs.make();
    const outside = join(dir, 'outside.jsonl');
    writeFileSync(outside, '{"event_type":"x","payload":{}}\n');
    const linked = join(dir, 'transcript.jsonl');
    symlinkSync(outside, linked);
    await expect(verifyTranscript(linked, trust)).rejects.toMatchObject({ code: 'INTEGRITY' });
    await expect(readTranscript(linked)).rejects.toMatchObject({ code: 'INTEGRITY' });
    const big = join(await dirs.make(), 'transcript.jsonl');
    writeFileSync(big, '');
    truncateSync(big, 4096);
    await expect(verifyTranscript(big, trust, 'strict', { maxBytes: 1024 })).rejects.toMatchObject({
      code: 'LIMIT',
      hint: expect.any(String),
    });
  });
});
