/** Where a CLI command writes: stdout for results (JSON), stderr for messages. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /**
   * Said by a verb whose work is wholly done once its answer is written (a tool run): nothing it
   * started must outlive the answer. Optional; only the `rye` bin acts on it (`finish`).
   */
  nothingLeftToRun?: () => void;
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

let endAtOnce = false;

export const processIo: CliIo = {
  stdout: (text) => write(process.stdout, text),
  stderr: (text) => write(process.stderr, text),
  nothingLeftToRun: () => {
    endAtOnce = true;
  },
};

/**
 * Ends the bin's process with `code`. When the verb said nothing is left to run, that is as soon
 * as stdout and stderr are flushed: node would otherwise stop the idle worker threads one by one
 * and free the heap first, ~5 ms of a cold `rye execute` spent after its answer. Otherwise node
 * ends the process when the event loop is empty, as usual.
 */
export function finish(code: number): void {
  process.exitCode = code;
  if (!endAtOnce) return;
  let pending = 2;
  const flushed = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', flushed);
  process.stderr.write('', flushed);
}
