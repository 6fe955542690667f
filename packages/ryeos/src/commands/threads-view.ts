/**
 * `rye threads view [--control] [--no-open]` (alias `rye view`): serves the thread viewer on
 * 127.0.0.1 until Ctrl-C, prints its URL (with the token that opens it), and opens it in a
 * browser when this machine has one to show.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ThreadStoreOpener } from '@ryeos/threads';
import type { CliIo } from '../cli/io.js';
import type { createRye } from '../rye.js';

type Rye = ReturnType<typeof createRye>;

/** The desktop's "open this URL" command, when there is a desktop to open it on. */
function opener(env: NodeJS.ProcessEnv): string[] | undefined {
  if (process.platform === 'darwin') return ['open'];
  if (process.platform === 'win32') return ['cmd', '/c', 'start', '""'];
  return env.DISPLAY || env.WAYLAND_DISPLAY ? ['xdg-open'] : undefined;
}

/**
 * A page that sends the browser on to `url`, in a folder only this user can enter (0700, file
 * 0600). The browser is given this file, never the URL: another local user reads every process's
 * argv (/proc/<pid>/cmdline), so a token there would be theirs too.
 */
function writeOpener(url: string): { file: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'rye-view-'));
  const file = join(dir, 'open.html');
  const href = url.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  writeFileSync(
    file,
    `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0;url=${href}">\n<title>Rye thread viewer</title>\n<a href="${href}">Open the thread viewer</a>\n`,
    { mode: 0o600, flag: 'wx' },
  );
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Opens the viewer in a browser through an opener file; returns what removes that file. */
function openInBrowser(url: string): (() => void) | undefined {
  const command = opener(process.env);
  if (!command) return undefined;
  let opened: ReturnType<typeof writeOpener> | undefined;
  try {
    opened = writeOpener(url);
    const child = spawn(command[0]!, [...command.slice(1), pathToFileURL(opened.file).href], {
      stdio: 'ignore',
      detached: true,
    });
    child.on('error', () => undefined); // no browser: the printed URL is enough
    child.unref();
  } catch {
    // as above
  }
  return opened?.remove;
}

export async function viewCommand(
  rye: Rye,
  options: { control: boolean; open: boolean; store?: ThreadStoreOpener },
  io: CliIo,
): Promise<number> {
  const { startViewer } = await import('../viewer/server.js');
  const viewer = await startViewer({
    source: {
      projectPath: rye.projectPath,
      executor: () => rye.executor(),
      ...(options.store ? { store: options.store } : {}),
    },
    control: options.control,
    title: basename(rye.projectPath),
  });
  io.stdout(`Thread viewer: ${viewer.url}\n`);
  io.stdout(
    `${options.control ? 'With --control: the page can cancel and kill threads.' : 'Read-only (--control adds cancel and kill).'} The URL's token is the key: do not share it. Ctrl-C stops the viewer.\n`,
  );
  const removeOpener = options.open ? openInBrowser(viewer.url) : undefined;
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  removeOpener?.();
  await viewer.close();
  return 0;
}
