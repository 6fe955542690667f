/**
 * `rye threads view [--control] [--no-open]` (alias `rye view`): serves the thread viewer on
 * 127.0.0.1 until Ctrl-C, prints its URL (with the token that opens it), and opens it in a
 * browser when this machine has one to show.
 */
import { spawn } from 'node:child_process';
import { basename } from 'node:path';
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

function openInBrowser(url: string): void {
  const command = opener(process.env);
  if (!command) return;
  try {
    const child = spawn(command[0]!, [...command.slice(1), url], { stdio: 'ignore', detached: true });
    child.on('error', () => undefined); // no browser: the printed URL is enough
    child.unref();
  } catch {
    // as above
  }
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
  if (options.open) openInBrowser(viewer.url);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await viewer.close();
  return 0;
}
