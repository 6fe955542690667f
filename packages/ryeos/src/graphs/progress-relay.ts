/**
 * A state graph's progress lines (`[graph:<run_id>] step i/n <node> ✓ <secs>`) are written by the
 * runtime's process to its stderr, which the executor captures; the CLI passes only those lines
 * on to its own stderr, as they arrive, and nothing else a tool writes there.
 */
const PROGRESS = /^\[graph:[^\]\s]+\] step \d+\/\d+ /;

export function graphProgressRelay(
  write: (line: string) => void,
): (chunk: string, stream: 'stdout' | 'stderr') => void {
  let partial = '';
  return (chunk, stream) => {
    if (stream !== 'stderr') return;
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    // A runaway writer cannot grow the buffer without end: a line this long is no progress line.
    if (partial.length > 4096) partial = '';
    for (const line of lines) if (PROGRESS.test(line)) write(`${line}\n`);
  };
}
