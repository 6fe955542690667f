// Shared by the benches: the trivial JS tool they run, and small statistics helpers.

/** A node tool that reads its params and echoes them: the cheapest real tool there is. */
export const NOOP_TOOL = `export const __version__ = "1.0.0";
export const __executor_id__ = "rye/core/runtimes/node/node";
export const __category__ = "bench";
let raw = '';
for await (const chunk of process.stdin) raw += chunk;
console.log(JSON.stringify({ success: true, echo: JSON.parse(raw || '{}') }));
`;

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export const round = (value, digits = 2) => Number(value.toFixed(digits));
