// SSE throughput of @ryeos/lillux httpStream: a 127.0.0.1 server sends ~32 MB of Anthropic-like
// `content_block_delta` events in 64 KB chunks; we measure end-to-end MB/s and events/s (median of 5).
// Usage: node bench/sse.mjs   (needs a built packages/lillux/dist)
// Prints {"bench":"sse_throughput","mb_per_s":..,"events_per_s":..,"bytes":..}
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { callbackSink, httpStream, ReturnSink } from '../packages/lillux/dist/index.js';

const TARGET_BYTES = 32 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
const RUNS = 5;

const WORDS = (
  'the model streams tokens as small deltas and each delta carries a short piece of text with ' +
  'punctuation, numbers like 42 or 3.14, unicode such as café, naïve, 日本語 and emoji 🎉 now and then'
).split(' ');

/** Builds the stream once: message_start, content_block_start, deltas (+ pings), stops. */
function buildStream() {
  const parts = [];
  let size = 0;
  let events = 0;
  const push = (event, data) => {
    const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
    parts.push(text);
    size += Buffer.byteLength(text);
    events++;
  };
  push('message_start', {
    type: 'message_start',
    message: { id: 'msg_bench', type: 'message', role: 'assistant', model: 'claude-bench', content: [] },
  });
  push('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'text', text: '' },
  });
  let seed = 1;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  while (size < TARGET_BYTES) {
    let piece = '';
    const n = 3 + Math.floor(rand() * 12);
    for (let i = 0; i < n; i++) piece += `${WORDS[Math.floor(rand() * WORDS.length)]} `;
    push('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: piece },
    });
    if (events % 500 === 0) push('ping', { type: 'ping' });
  }
  push('content_block_stop', { type: 'content_block_stop', index: 0 });
  push('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'end_turn' },
    usage: { output_tokens: 1 },
  });
  push('message_stop', { type: 'message_stop' });
  const body = Buffer.from(parts.join(''));
  const chunks = [];
  for (let i = 0; i < body.length; i += CHUNK_BYTES) chunks.push(body.subarray(i, i + CHUNK_BYTES));
  return { chunks, bytes: body.length, events };
}

function startServer(chunks) {
  const server = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const chunk of chunks) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve));
    }
    res.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

export async function run() {
  const { chunks, bytes, events } = buildStream();
  const server = await startServer(chunks);
  const url = `http://127.0.0.1:${server.address().port}/v1/messages`;
  const once = async () => {
    let count = 0;
    let dataChars = 0;
    const counter = callbackSink('count', (e) => {
      count++;
      dataChars += e.data.length;
    });
    const started = performance.now();
    const result = await httpStream({
      url,
      method: 'POST',
      body: { stream: true },
      returnSink: new ReturnSink(0),
      sinks: [counter],
    });
    const seconds = (performance.now() - started) / 1000;
    if (!result.success || count !== events || result.stream_events_count !== events || dataChars === 0) {
      throw new Error(
        `bench stream wrong: ${JSON.stringify({ ...result, events: undefined })}, got ${count}/${events}`,
      );
    }
    return seconds;
  };
  try {
    await once(); // warm-up
    const times = [];
    for (let i = 0; i < RUNS; i++) times.push(await once());
    const seconds = median(times);
    return {
      bench: 'sse_throughput',
      mb_per_s: Math.round((bytes / 1024 / 1024 / seconds) * 10) / 10,
      events_per_s: Math.round(events / seconds),
      bytes,
    };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.log(JSON.stringify(await run()));
}
