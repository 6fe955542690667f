/** Where a CLI command writes: stdout for results (JSON), stderr for messages. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const closed = new WeakSet<NodeJS.WriteStream>();
const watched = new WeakSet<NodeJS.WriteStream>();

/**
 * A reader that went away (`rye search … | head`) ends the output quietly: later writes to that
 * stream are dropped instead of raising EPIPE, and the command still finishes (and cleans up).
 */
export function quietWhenClosed(stream: NodeJS.WriteStream): void {
  if (watched.has(stream)) return;
  watched.add(stream);
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    closed.add(stream);
  });
}

function write(stream: NodeJS.WriteStream, text: string): void {
  quietWhenClosed(stream);
  if (!closed.has(stream)) stream.write(text);
}

export const processIo: CliIo = {
  stdout: (text) => write(process.stdout, text),
  stderr: (text) => write(process.stderr, text),
};
