// The thread viewer's page (served by `rye threads view`). Everything a thread wrote — model
// text, tool input and output, errors — is untrusted: it is only ever set as textContent, never
// parsed as HTML. Every request is relative to the page's URL, which carries the viewer's token.

const TREE_EVERY_MS = 1000;
const TRANSCRIPT_EVERY_MS = 300;
const DETAIL_EVERY_MS = 2000;
/** Characters of a tool result shown (the rest is in the transcript file). */
const RESULT_SHOWN = 4000;

const state = {
  control: false,
  threads: [],
  selected: undefined,
  offset: 0,
  /** Per selected thread: the assistant block of each turn, and each tool call's block. */
  answers: new Map(),
  calls: new Map(),
  attenuated: [],
  generation: 0,
};

/** An element with text (never HTML) and children. */
function el(tag, props = {}, children = []) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'class') node.className = value;
    else if (key.startsWith('data-')) node.setAttribute(key, String(value));
    else if (key === 'onclick') node.addEventListener('click', value);
    else node[key] = value;
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

async function getJson(path) {
  const response = await fetch(path, { cache: 'no-store' });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ?? `HTTP ${response.status}`);
  return body;
}

function money(value) {
  return typeof value === 'number' ? `$${value.toFixed(4)}` : '';
}

/** A spend the unsigned registry states: a negative or non-number one is flagged, not shown. */
function registrySpendCell(cls, value) {
  const valid = typeof value === 'number' && Number.isFinite(value) && value >= 0;
  return el('td', {
    class: `num ${cls} ${valid ? 'unverified' : 'invalid'}`,
    'data-value': valid ? value : undefined,
    title: valid ? REGISTRY_NOTE : `The registry states ${String(value)}: not a spend (${REGISTRY_NOTE})`,
    text: valid ? money(value) : 'invalid',
  });
}

const REGISTRY_NOTE = "From the project's registry: unsigned, not verified";

function duration(seconds) {
  if (typeof seconds !== 'number') return '';
  if (seconds < 120) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function limitsText(limits) {
  const parts = [];
  for (const key of ['turns', 'tokens', 'spawns', 'depth', 'duration_seconds']) {
    if (limits[key] !== undefined) parts.push(`${key.replace('_seconds', '')} ${limits[key]}`);
  }
  return parts.join(', ');
}

const RUNNING = new Set(['created', 'running']);

/** Threads as a forest: children under their parent, oldest child first. */
function forest(threads) {
  const byId = new Map(threads.map((t) => [t.thread_id, { thread: t, children: [] }]));
  const roots = [];
  for (const node of byId.values()) {
    const parent = node.thread.parent_id ? byId.get(node.thread.parent_id) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  for (const node of byId.values()) node.children.reverse();
  return roots;
}

async function control(action, threadId) {
  const response = await fetch(`api/${action}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ thread_id: threadId }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) alert(`${action} failed: ${body.error ?? response.status}`);
  await refreshTree();
}

function controlButtons(thread) {
  if (!state.control || !RUNNING.has(thread.status)) return undefined;
  const stop = (action) => (event) => {
    event.stopPropagation();
    void control(action, thread.thread_id);
  };
  return el('span', {}, [
    el('button', { class: 'cancel', text: 'Cancel', type: 'button', onclick: stop('cancel') }),
    el('button', { class: 'kill', text: 'Kill', type: 'button', onclick: stop('kill') }),
  ]);
}

function treeRow(node, branch) {
  const t = node.thread;
  const budget = t.limits?.spend;
  const over = typeof budget === 'number' && t.subtree_spend > budget;
  return el(
    'tr',
    {
      'data-thread-id': t.thread_id,
      class: t.thread_id === state.selected ? 'selected' : '',
      onclick: () => select(t.thread_id),
    },
    [
      el('td', { class: 'c-thread' }, [
        el('span', { class: 'indent', text: branch }),
        el('span', { text: t.thread_id }),
      ]),
      el('td', { class: `c-status s-${t.status}`, text: t.status }),
      el('td', { class: 'c-model', text: t.model ?? '' }),
      el('td', { class: 'num c-turns', text: t.cost.turns }),
      el('td', {
        class: 'num c-tokens',
        text: (t.cost.input_tokens + t.cost.output_tokens).toLocaleString('en'),
      }),
      registrySpendCell('c-spend', t.cost.spend),
      registrySpendCell(`c-subtree${over ? ' over' : ''}`, t.subtree_spend),
      el('td', { class: 'num c-budget', text: money(budget) }),
      el('td', { class: 'c-limits', text: limitsText(t.limits ?? {}) }),
      el('td', { class: 'num c-elapsed', text: duration(t.elapsed_seconds) }),
      el('td', { class: 'control-only' }, [controlButtons(t)]),
    ],
  );
}

function renderTree() {
  const body = document.querySelector('#tree tbody');
  const rows = [];
  const walk = (node, prefix, branch) => {
    rows.push(treeRow(node, branch));
    node.children.forEach((child, i) => {
      const last = i === node.children.length - 1;
      walk(child, `${prefix}${last ? '   ' : '│  '}`, `${prefix}${last ? '└─ ' : '├─ '}`);
    });
  };
  for (const root of forest(state.threads)) walk(root, '', '');
  body.replaceChildren(...rows);
  document.getElementById('empty').hidden = state.threads.length > 0;
}

async function refreshTree() {
  try {
    state.threads = (await getJson('api/threads')).threads;
    renderTree();
    document.getElementById('connection').textContent = '';
  } catch (error) {
    document.getElementById('connection').textContent = `not updating: ${error.message}`;
  }
}

function select(threadId) {
  if (state.selected === threadId) return;
  state.selected = threadId;
  state.generation += 1;
  state.offset = 0;
  state.answers = new Map();
  state.calls = new Map();
  state.attenuated = [];
  document.getElementById('transcript').replaceChildren();
  document.getElementById('attenuated').replaceChildren();
  document.getElementById('detail').hidden = false;
  document.getElementById('detail-title').textContent = threadId;
  // Nothing of the previous thread stays under the new title while this one loads.
  showDetailState('loading…', '');
  renderTree();
  void refreshDetail();
  void refreshTranscript();
}

async function refreshDetail() {
  const id = state.selected;
  if (!id) return;
  let detail;
  try {
    detail = await getJson(`api/thread?id=${encodeURIComponent(id)}`);
  } catch (error) {
    if (state.selected === id) showDetailState(`Cannot read this thread: ${error.message}`, 'bad');
    return;
  }
  if (state.selected !== id) return;
  const t = detail.thread;
  const meta = [
    el('div', { text: `${t.directive} · ${t.status} · ${t.model ?? 'no model yet'}` }),
    el('div', {
      text: `limits: ${limitsText(detail.limits) || 'none'}${detail.limits.spend !== undefined ? `, spend ${money(detail.limits.spend)}` : ''}`,
    }),
    el('div', { class: 'signed-cost', text: signedCostText(detail) }),
    detail.continuation_thread_id
      ? el('div', { text: `continued as ${detail.continuation_thread_id}` })
      : undefined,
    detail.error
      ? el('div', {
          class: 's-error',
          text: `error: ${typeof detail.error === 'string' ? detail.error : JSON.stringify(detail.error)}`,
        })
      : undefined,
    state.control && RUNNING.has(t.status) ? controlButtons({ ...t, limits: detail.limits }) : undefined,
  ];
  // replaceChildren would show an undefined as the text 'undefined'.
  document.getElementById('detail-meta').replaceChildren(...meta.filter(Boolean));
  const verification = document.getElementById('verification');
  if (detail.integrity.valid) {
    verification.className = 'ok';
    verification.textContent = 'Signed records verify.';
  } else {
    const problems = [detail.integrity.thread_json.error, detail.integrity.transcript.error].filter(Boolean);
    verification.className = 'bad';
    verification.textContent = `Records do NOT verify: ${problems.join('; ')}`;
  }
  document
    .getElementById('capabilities')
    .replaceChildren(...detail.capabilities.map((cap) => el('li', { text: cap })));
}

/** No thread's details: only what is happening (loading, or why it cannot be read). */
function showDetailState(message, cls) {
  document.getElementById('detail-meta').replaceChildren();
  document.getElementById('capabilities').replaceChildren();
  const verification = document.getElementById('verification');
  verification.className = cls;
  verification.textContent = message;
}

/** What the thread's own signed record says it spent, when that record verifies. */
function signedCostText(detail) {
  const spend = detail.cost?.spend;
  if (!detail.integrity.thread_json.valid || typeof spend !== 'number') {
    return 'spent: not verified (its signed record does not say or does not verify)';
  }
  return `spent (its signed record): ${money(spend)}`;
}

function short(value, max = 600) {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text && text.length > max ? `${text.slice(0, max)}…` : (text ?? '');
}

function note(text, cls = '') {
  return el('div', { class: `note ${cls}`, text });
}

/** The assistant block of a turn, made on its first text. */
function answerBlock(turn, container) {
  let block = state.answers.get(turn);
  if (!block) {
    const body = el('span', { class: 'text' });
    block = {
      node: el('div', { class: 'msg assistant', 'data-turn': turn }, [
        el('span', { class: 'who', text: 'assistant' }),
        body,
      ]),
      body,
      streamed: false,
    };
    state.answers.set(turn, block);
    container.append(block.node);
  }
  return block;
}

function toolBlock(payload, container) {
  const output = el('pre', { class: 'tool-output' });
  const result = el('pre', { class: 'tool-result' });
  const stateNode = el('span', { class: 'tool-state', text: 'running…' });
  const node = el('div', { class: 'tool running', 'data-call-id': payload.call_id }, [
    el('div', { class: 'tool-head' }, [
      el('span', { text: `→ ${payload.tool} ${short(payload.input, 300)}` }),
      stateNode,
    ]),
    output,
    result,
  ]);
  const block = { node, output, result, stateNode };
  state.calls.set(payload.call_id, block);
  container.append(node);
  return block;
}

function endNote(type, p) {
  const cost = p.cost ?? {};
  const status = type.slice('thread_'.length);
  const tokens = Number(cost.input_tokens ?? 0) + Number(cost.output_tokens ?? 0);
  return note(
    `${status}: ${cost.turns ?? 0} turns, ${tokens} tokens, ${money(Number(cost.spend ?? 0))}${p.error ? ` — ${short(p.error, 300)}` : ''}`,
    'end',
  );
}

/** Adds one event to the transcript view. */
function addEvent(event, container) {
  const p = event.payload ?? {};
  switch (event.event_type) {
    case 'system_prompt':
      container.append(
        el('details', {}, [el('summary', { text: 'system prompt' }), el('pre', { text: p.text ?? '' })]),
      );
      return;
    case 'cognition_in':
      container.append(
        el('div', { class: 'msg user' }, [
          el('span', { class: 'who', text: p.role ?? 'user' }),
          el('span', { text: p.text ?? '' }),
        ]),
      );
      return;
    case 'cognition_out_delta': {
      const block = answerBlock(p.turn, container);
      block.streamed = true;
      block.body.textContent += String(p.text ?? '');
      return;
    }
    case 'cognition_out': {
      const block = state.answers.get(p.turn);
      if (!block?.streamed && p.text) answerBlock(p.turn, container).body.textContent = String(p.text);
      if (p.is_partial) container.append(note(`answer cut off: ${short(p.error, 300)}`));
      return;
    }
    case 'cognition_reasoning':
      return;
    case 'tool_call_start':
      toolBlock(p, container);
      return;
    case 'tool_output': {
      const block = state.calls.get(p.call_id);
      if (block) block.output.textContent += String(p.text ?? '');
      return;
    }
    case 'tool_call_result': {
      const block =
        state.calls.get(p.call_id) ?? toolBlock({ call_id: p.call_id, tool: '?', input: '' }, container);
      const text = String(p.error ?? p.output ?? '');
      const denied = p.error !== undefined && /denied|not permitted|not allowed/i.test(text);
      block.node.classList.remove('running');
      block.node.classList.add(p.error !== undefined ? (denied ? 'denied' : 'error') : 'done');
      block.stateNode.textContent = `${denied ? 'denied' : p.error !== undefined ? 'failed' : 'done'}${typeof p.duration_ms === 'number' ? ` in ${p.duration_ms} ms` : ''}`;
      block.result.textContent = short(text, RESULT_SHOWN);
      return;
    }
    case 'capabilities_attenuated': {
      const grants = Array.isArray(p.grants) ? p.grants.map(String) : [short(p.grants)];
      state.attenuated.push(...grants);
      document.getElementById('attenuated').replaceChildren(
        el('div', {
          text: `Attenuated away from its directive's grants${p.parent_thread_id ? ` by parent ${p.parent_thread_id}` : ''}:`,
        }),
        el(
          'ul',
          {},
          state.attenuated.map((g) => el('li', { text: g })),
        ),
      );
      container.append(note(`capabilities attenuated: ${grants.join(', ')}`));
      return;
    }
    case 'thread_handoff':
      container.append(note(`handed off to ${p.new_thread_id}`));
      return;
    case 'thread_resumed':
      container.append(note(`resumed as ${p.new_thread_id}`));
      return;
    case 'thread_completed':
    case 'thread_error':
    case 'thread_cancelled':
    case 'thread_continued':
      container.append(endNote(event.event_type, p));
      return;
    case 'checkpoint':
    case 'checkpoint_saved':
    case 'response_usage':
    case 'thread_finalized':
    case 'context_injected':
      return;
    case 'live_events_capped':
      container.append(note(`live output past ${p.cap_bytes} bytes was not recorded`));
      return;
    default:
      // Retries, hook actions, limits, warnings and whatever a later version writes.
      container.append(note(`${event.event_type}: ${short(p, 400)}`));
  }
}

let transcriptRead;

/** Reads what was appended since the last read; one read at a time, or events would repeat. */
function refreshTranscript() {
  transcriptRead ??= readTranscript().finally(() => {
    transcriptRead = undefined;
  });
  return transcriptRead;
}

async function readTranscript() {
  const id = state.selected;
  const generation = state.generation;
  if (!id) return;
  try {
    for (;;) {
      const slice = await getJson(`api/transcript?id=${encodeURIComponent(id)}&offset=${state.offset}`);
      if (state.generation !== generation) return;
      const container = document.getElementById('transcript');
      for (const event of slice.events) addEvent(event, container);
      const more = slice.next_offset > state.offset && slice.events.length > 0;
      state.offset = slice.next_offset;
      if (!more) return;
    }
  } catch (error) {
    document.getElementById('connection').textContent = `transcript not updating: ${error.message}`;
  }
}

/** Runs `task` every `ms`, never two at once. */
function every(ms, task) {
  let busy = false;
  setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      await task();
    } finally {
      busy = false;
    }
  }, ms);
}

async function start() {
  try {
    const config = await getJson('api/config');
    state.control = config.control === true;
    document.getElementById('project').textContent = config.title ?? '';
    document.getElementById('mode').textContent = state.control
      ? 'control: cancel and kill enabled'
      : 'read-only';
    document.body.classList.toggle('control', state.control);
  } catch (error) {
    document.getElementById('connection').textContent = `cannot reach the viewer: ${error.message}`;
    return;
  }
  await refreshTree();
  every(TREE_EVERY_MS, refreshTree);
  every(TRANSCRIPT_EVERY_MS, refreshTranscript);
  every(DETAIL_EVERY_MS, refreshDetail);
}

void start();
