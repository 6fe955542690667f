import { flushTracing, loadedTracer } from '@ryeos/lillux';
/** Where a CLI command writes: stdout for results (JSON), stderr for messages. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /**
   * Said by a verb whose work is wholly done once its answer is written (a tool run): nothing it
   * started must outlive the answer. Optional; only the `rye` bin acts on it (`finish`).
   */
  nothingLeftToRun?: () => void;
  /** Stdout is a terminal: a person reads it, so a verb may print tables instead of JSON. */
  readonly isTerminal?: boolean;
}

const closed = new WeakSet<NodeJS.WriteStream>();
const watched = new WeakSet<NodeJS.WriteStream>();
/** The answer could not be written on stdout (not a reader that went away): the exit is 1. */
let answerLost = false;

/**
 * A reader that went away (`rye search … | head`) ends the output quietly: later writes to that
 * stream are dropped instead of raising EPIPE, and the command still finishes (and cleans up).
 * Any other failure to write stdout (a full disk, a descriptor opened read-only) loses the
 * answer: that is said on stderr, in one line, and the command exits 1. A message that cannot be
 * written on stderr is dropped.
 */
export function quietWhenClosed(stream: NodeJS.WriteStream): void {
  if (watched.has(stream)) return;
  watched.add(stream);
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (closed.has(stream)) return; // said once
    closed.add(stream);
    if (error.code === 'EPIPE' || stream !== process.stdout) return;
    answerLost = true;
    process.exitCode = 1;
    write(process.stderr, `rye: could not write the output: ${error.message}\n`);
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
  get isTerminal() {
    return process.stdout.isTTY === true;
  },
};

/**
 * Ends the bin's process with `code`. When the verb said nothing is left to run, that is as soon
 * as stdout and stderr are flushed: node would otherwise wait for the event loop to drain and free
 * the heap first, milliseconds of a cold `rye execute` spent after its answer. Otherwise node ends
 * the process when the event loop is empty, as usual. Either way an answer that could not be
 * written (a full disk) ends it with 1; a reader that went away does not.
 */
export function finish(code: number): void {
  process.exitCode = answerLost ? 1 : code;
  // Spans an OTLP export still buffers go out first (only when something was traced).
  const tracing = loadedTracer() ? flushTracing() : undefined;
  if (!endAtOnce) return;
  let pending = 2;
  const flushed = () => {
    if (--pending > 0) return;
    const exit = () => process.exit(answerLost ? 1 : code);
    // One turn later: a failed write's 'error' event comes after its callback.
    setImmediate(() => (tracing ? void tracing.finally(exit) : exit()));
  };
  process.stdout.write('', (error?: Error | null) => {
    if (error && (error as NodeJS.ErrnoException).code !== 'EPIPE') answerLost = true;
    flushed();
  });
  process.stderr.write('', flushed); // a message lost on stderr loses no answer
}
