/**
 * `rye threads list` and `show` for a person at a terminal: the threads as a tree (each child
 * under the thread that started it) in aligned columns, with each thread's own spend and its
 * subtree's (itself and every descendant listed). Scripts get JSON instead (`--json`, or any
 * stdout that is not a terminal).
 */
import type { ThreadSummary } from '@ryeos/threads';
import { printable } from '../cli/printable.js';

/** A thread with its children, and what it and they spent together. */
export interface ThreadNode {
  thread: ThreadSummary;
  children: ThreadNode[];
  subtreeSpend: number;
}

/**
 * The threads as trees, roots in the order given (newest first): a thread whose parent is not among
 * them is a root. A parent cycle (only a hand-edited registry has one) is cut where it closes.
 */
export function threadForest(threads: readonly ThreadSummary[]): ThreadNode[] {
  const nodes = new Map<string, ThreadNode>();
  for (const thread of threads) nodes.set(thread.thread_id, { thread, children: [], subtreeSpend: 0 });
  const roots: ThreadNode[] = [];
  for (const node of nodes.values()) {
    const parentId = node.thread.parent_id;
    const parent = parentId ? nodes.get(parentId) : undefined;
    if (parent && !isAncestor(node, parent, nodes)) parent.children.push(node);
    else roots.push(node);
  }
  // Listed newest first; a parent's children read best in the order they were started.
  for (const node of nodes.values()) node.children.reverse();
  for (const root of roots) sumSpend(root);
  return roots;
}

/** Whether `node` is `candidate` or one of its ancestors (linking them would close a cycle). */
function isAncestor(node: ThreadNode, candidate: ThreadNode, nodes: Map<string, ThreadNode>): boolean {
  const seen = new Set<string>();
  for (let at: ThreadNode | undefined = candidate; at; ) {
    if (at === node) return true;
    if (seen.has(at.thread.thread_id)) return false;
    seen.add(at.thread.thread_id);
    at = at.thread.parent_id ? nodes.get(at.thread.parent_id) : undefined;
  }
  return false;
}

function sumSpend(node: ThreadNode): number {
  node.subtreeSpend =
    (registrySpend(node.thread.cost.spend) ?? 0) +
    node.children.reduce((sum, child) => sum + sumSpend(child), 0);
  return node.subtreeSpend;
}

export function money(value: number): string {
  return `$${value.toFixed(4)}`;
}

/**
 * Spend as the registry states it. The registry is an unsigned file a repository can ship, so a
 * figure that cannot be spend (negative, not a number) is flagged, never shown or summed.
 */
export function registrySpend(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function registryMoney(value: unknown): string {
  const spend = registrySpend(value);
  return spend === undefined ? 'invalid' : money(spend);
}

/** Said under every figure read from the registry. */
export const REGISTRY_NOTE = "from the project's registry: unsigned, not verified";

function tokens(cost: ThreadSummary['cost']): string {
  return (cost.input_tokens + cost.output_tokens).toLocaleString('en');
}

/** Seconds, minutes, hours or days since `iso` (a registry time), as one short word. */
export function age(iso: string, now = Date.now()): string {
  const at = Date.parse(iso.includes('T') ? iso : `${iso.replace(' ', 'T')}Z`);
  if (!Number.isFinite(at)) return '?';
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}

const HEADERS = ['THREAD', 'STATUS', 'MODEL', 'TURNS', 'TOKENS', 'SPEND', 'SUBTREE', 'UPDATED'];
/** Columns aligned right (numbers). */
const RIGHT = new Set([3, 4, 5, 6, 7]);

/** Rows of cells laid out in columns two spaces apart; every cell is shown as printable text. */
function columns(rows: string[][]): string {
  const safe = rows.map((row) => row.map((cell) => printable(cell).replace(/[\n\t]/g, ' ')));
  const widths = HEADERS.map((_, i) => Math.max(...safe.map((row) => [...(row[i] ?? '')].length)));
  return safe
    .map((row) =>
      row
        .map((cell, i) => {
          const pad = ' '.repeat(widths[i]! - [...cell].length);
          return RIGHT.has(i) ? pad + cell : cell + pad;
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** The forest as table rows, each child indented under its parent with tree lines. */
function treeRows(forest: readonly ThreadNode[], now: number): string[][] {
  const rows: string[][] = [];
  const walk = (node: ThreadNode, prefix: string, branch: string) => {
    const t = node.thread;
    rows.push([
      `${branch}${t.thread_id}`,
      t.status,
      t.model ?? '-',
      String(t.cost.turns),
      tokens(t.cost),
      registryMoney(t.cost.spend),
      node.children.length ? money(node.subtreeSpend) : '',
      age(t.updated_at, now),
    ]);
    node.children.forEach((child, i) => {
      const last = i === node.children.length - 1;
      walk(child, `${prefix}${last ? '   ' : '│  '}`, `${prefix}${last ? '└─ ' : '├─ '}`);
    });
  };
  for (const root of forest) walk(root, '', '');
  return rows;
}

/** `rye threads list` at a terminal. */
export function renderThreadList(threads: readonly ThreadSummary[], now = Date.now()): string {
  if (threads.length === 0) return 'No threads in this project yet.\n';
  const forest = threadForest(threads);
  const total = forest.reduce((sum, root) => sum + root.subtreeSpend, 0);
  const table = columns([HEADERS, ...treeRows(forest, now)]);
  const count = `${threads.length} thread${threads.length === 1 ? '' : 's'}`;
  return `${table}\n\n${count}, ${money(total)} spent in all (spend ${REGISTRY_NOTE})\n`;
}

/** What `rye threads show` reports, as far as this view reads it. */
export interface ShownThread {
  thread_id: string;
  directive: string;
  status: string;
  model?: string | null;
  parent_id?: string | null;
  created_at?: string;
  updated_at?: string;
  cost?: unknown;
  outputs?: unknown;
  error?: unknown;
  integrity: { valid: boolean };
}

function costLine(cost: unknown): string | undefined {
  if (typeof cost !== 'object' || cost === null) return undefined;
  const c = cost as Record<string, unknown>;
  const num = (key: string) => (typeof c[key] === 'number' ? (c[key] as number) : 0);
  const elapsed = typeof c.elapsed_seconds === 'number' ? `, ${c.elapsed_seconds.toFixed(1)} s` : '';
  return `${num('turns')} turns, ${(num('input_tokens') + num('output_tokens')).toLocaleString('en')} tokens, ${money(num('spend'))}${elapsed}`;
}

/**
 * `rye threads show` at a terminal: the thread's fields, then the tree of its descendants (from
 * the registry) with the subtree's spend; `problems` lists what does not verify.
 */
export function renderThreadShow(
  report: ShownThread,
  descendants: readonly ThreadSummary[],
  problems: readonly string[],
  now = Date.now(),
): string {
  const own =
    typeof report.cost === 'object' && report.cost !== null ? (report.cost as { spend?: unknown }).spend : 0;
  const root: ThreadSummary = {
    thread_id: report.thread_id,
    directive: report.directive,
    status: report.status as ThreadSummary['status'],
    parent_id: null,
    model: report.model ?? null,
    created_at: report.created_at ?? '',
    updated_at: report.updated_at ?? '',
    cost: { turns: 0, input_tokens: 0, output_tokens: 0, spend: typeof own === 'number' ? own : 0 },
  };
  const [tree] = threadForest([root, ...descendants.filter((t) => t.thread_id !== report.thread_id)]);
  const fields: Array<[string, string | undefined]> = [
    ['thread', report.thread_id],
    ['directive', report.directive],
    ['status', report.status],
    ['model', report.model ?? undefined],
    ['parent', report.parent_id ?? undefined],
    ['created', report.created_at],
    ['updated', report.updated_at],
    ['cost', costLine(report.cost)],
    [
      'subtree spend',
      tree && tree.children.length > 0
        ? `${money(tree.subtreeSpend)} (children's ${REGISTRY_NOTE})`
        : undefined,
    ],
    ['outputs', report.outputs === undefined ? undefined : JSON.stringify(report.outputs)],
    [
      'error',
      report.error === undefined
        ? undefined
        : typeof report.error === 'string'
          ? report.error
          : JSON.stringify(report.error),
    ],
    ['records', report.integrity.valid ? 'signed records verify' : `DO NOT VERIFY: ${problems.join('; ')}`],
  ];
  const shown = fields.filter(
    (field): field is [string, string] => field[1] !== undefined && field[1] !== '',
  );
  const width = Math.max(...shown.map(([name]) => name.length));
  let text = shown
    .map(([name, value]) => `${name.padEnd(width)}  ${printable(value).replace(/\n/g, ' ')}`)
    .join('\n');
  if (tree && tree.children.length > 0) {
    text += `\n\nchildren\n${columns([HEADERS, ...treeRows(tree.children, now)])}`;
  }
  return `${text}\n`;
}
