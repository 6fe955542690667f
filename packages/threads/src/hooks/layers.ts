/**
 * The hook list of a thread (spec threads §5.1, §5.2): hooks from five layers, normalised to one
 * `Hook` shape and stable-sorted by layer.
 *
 *   0 user `hooks.yaml` · 1 directive `<hooks>` · 2 `hook_conditions.yaml` `builtin_hooks` and
 *   `context_hooks` · 3 project `hooks.yaml` · 4 `hook_conditions.yaml` `infra_hooks`
 *
 * An explicit `layer` on a hook wins over its source's layer. Control results of layer-4 hooks
 * are ignored by dispatch (infra hooks observe, they never steer a thread).
 *
 * Both shapes are accepted: YAML (`action:` or `actions:`, full condition grammar) and the
 * directive parser's `DirectiveHook` (XML attributes already coerced; `wrap`/`layer` are coerced
 * again here, because a string "false" must never read as true).
 */
import type { DirectiveHook } from '@ryeos/directives';
import { RyeError } from '@ryeos/lillux';
import { isRecord } from '../records.js';
import type { Condition } from './conditions.js';

/** Every event a hook may name (spec threads §5.3). */
export const HOOK_EVENTS = [
  'resolve_extends',
  'build_system_prompt',
  'thread_started',
  'thread_continued',
  'error',
  'limit',
  'after_step',
  'context_limit_reached',
  'directive_return',
  'after_complete',
  'context_window_pressure',
] as const;

export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Events whose hooks inject text (dispatched by `runContextHooks`). */
export const CONTEXT_EVENTS: readonly HookEvent[] = [
  'build_system_prompt',
  'thread_started',
  'thread_continued',
];

export const HOOK_PRIMARIES = ['execute', 'search', 'load', 'sign'] as const;
export type HookPrimary = (typeof HOOK_PRIMARIES)[number];

/** One action of a hook: a call of one of the four primary tools. */
export interface HookAction {
  primary: HookPrimary;
  item_type?: string;
  item_id?: string;
  params: Record<string, unknown>;
  /** `resolve_extends` only: the directive id to extend (never dispatched). */
  set_extends?: string;
}

export interface Hook {
  id: string;
  event: HookEvent;
  layer: number;
  condition?: Condition;
  actions: HookAction[];
  /** Context events: where the text goes relative to the directive (default `before`). */
  position?: 'before' | 'after';
  /** Context events: wrap the text in an XML tag named after the item (default true). */
  wrap: boolean;
  description?: string;
  /** Where the hook came from (a file path or `directive <id>`), for messages. */
  source?: string;
}

export const LAYER = { user: 0, directive: 1, builtin: 2, context: 2, project: 3, infra: 4 } as const;

/** Hooks of one source: a parsed `hooks.yaml` (the document or its `hooks` list), or a directive's. */
export interface HookSource {
  /** A file path or a label such as `directive acme/deploy`, named in errors. */
  source: string;
  hooks: unknown;
}

export interface HookLayerInput {
  user?: HookSource;
  directive?: { source: string; hooks: readonly DirectiveHook[] };
  /** The merged `hook_conditions.yaml` (`builtin_hooks`, `context_hooks`, `infra_hooks`). */
  hookConditions?: { source: string; config: unknown };
  project?: HookSource;
}

function invalid(source: string, id: string, problem: string, hint: string): RyeError {
  return new RyeError('CONFIG', `Invalid hook '${id}' in ${source}: ${problem}`, {
    hint,
    details: { source, hook_id: id },
  });
}

/** `true`/`false` as written in YAML or XML (a string "false" is false). */
function coerceBoolean(value: unknown, fallback: boolean, fail: (problem: string) => RyeError): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (['true', 'yes', '1'].includes(v)) return true;
    if (['false', 'no', '0'].includes(v)) return false;
  }
  throw fail(`wrap must be true or false, got ${JSON.stringify(value)}`);
}

function coerceLayer(value: unknown, fallback: number, fail: (problem: string) => RyeError): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isInteger(n)) return n;
  throw fail(`layer must be an integer (0 user … 4 infra), got ${JSON.stringify(value)}`);
}

/** Action attributes that are not params (everything else written on an action is a param). */
const ACTION_FIELDS = new Set(['primary', 'item_type', 'item_id', 'params', 'set_extends']);

function normalizeAction(raw: unknown, fail: (problem: string) => RyeError): HookAction {
  if (!isRecord(raw)) throw fail(`an action must be a mapping, got ${JSON.stringify(raw)}`);
  const primary = raw.primary ?? 'execute';
  if (typeof primary !== 'string' || !(HOOK_PRIMARIES as readonly string[]).includes(primary)) {
    throw fail(`unknown action primary ${JSON.stringify(primary)} (expected ${HOOK_PRIMARIES.join(', ')})`);
  }
  if (raw.params !== undefined && raw.params !== null && !isRecord(raw.params)) {
    throw fail('action params must be a mapping');
  }
  // Extra attributes (`<search query="…" scope="…"/>` in XML) are params; explicit params win.
  const params: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) if (!ACTION_FIELDS.has(k)) params[k] = v;
  Object.assign(params, raw.params ?? {});
  const action: HookAction = { primary: primary as HookPrimary, params };
  for (const key of ['item_type', 'item_id', 'set_extends'] as const) {
    const value = raw[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value === '') throw fail(`action ${key} must be a non-empty string`);
    action[key] = value;
  }
  if (action.set_extends === undefined && primary !== 'search' && action.item_id === undefined) {
    throw fail(`a '${primary}' action needs an item_id`);
  }
  return action;
}

/**
 * One hook, from YAML or a `DirectiveHook`, validated. `index` names hooks without an id
 * (directive hooks may omit it): `<source>#<index>`.
 */
export function normalizeHook(raw: unknown, source: string, defaultLayer: number, index = 0): Hook {
  if (!isRecord(raw)) {
    throw new RyeError('CONFIG', `Invalid hook #${index} in ${source}: a hook must be a mapping`, {
      hint: 'Each entry of hooks: is a mapping with id, event and action.',
      details: { source },
    });
  }
  const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : `${source}#${index}`;
  const fail = (problem: string) =>
    invalid(source, id, problem, 'See the hook format: id, event, condition, action (or actions).');
  const event = raw.event;
  if (typeof event !== 'string' || !(HOOK_EVENTS as readonly string[]).includes(event)) {
    throw invalid(
      source,
      id,
      `unknown event ${JSON.stringify(event ?? null)}`,
      `Valid events: ${HOOK_EVENTS.join(', ')}`,
    );
  }
  const rawActions: unknown[] = [];
  if (Array.isArray(raw.actions)) rawActions.push(...raw.actions);
  else if (raw.actions !== undefined && raw.actions !== null) throw fail('actions must be a list');
  // A DirectiveHook repeats its first action as `action`; YAML uses `action` alone.
  if (rawActions.length === 0 && raw.action !== undefined && raw.action !== null) rawActions.push(raw.action);
  if (rawActions.length === 0) {
    throw invalid(
      source,
      id,
      'it has no action',
      'Give the hook an action: {primary, item_type, item_id, params}.',
    );
  }
  const inputs = isRecord(raw.inputs) ? raw.inputs : {};
  const actions = rawActions.map((a) => {
    const action = normalizeAction(a, fail);
    // `<hook><inputs>` (directive XML) are params of each action unless the action sets them.
    action.params = { ...inputs, ...action.params };
    return action;
  });
  const hook: Hook = {
    id,
    event: event as HookEvent,
    layer: coerceLayer(raw.layer, defaultLayer, fail),
    actions,
    wrap: coerceBoolean(raw.wrap, true, fail),
    source,
  };
  if (raw.condition !== undefined && raw.condition !== null) {
    if (!isRecord(raw.condition)) throw fail('condition must be a mapping');
    hook.condition = raw.condition;
  }
  if (raw.position !== undefined && raw.position !== null) {
    if (raw.position !== 'before' && raw.position !== 'after') {
      throw fail(`position must be before or after, got ${JSON.stringify(raw.position)}`);
    }
    hook.position = raw.position;
  } else if (CONTEXT_EVENTS.includes(hook.event)) hook.position = 'before';
  if (typeof raw.description === 'string') hook.description = raw.description;
  return hook;
}

/** The hook list of one source: a document with `hooks:`, a bare list, or nothing. */
export function normalizeHooks(hooks: unknown, source: string, defaultLayer: number): Hook[] {
  const list = isRecord(hooks) ? hooks.hooks : hooks;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) {
    throw new RyeError('CONFIG', `Invalid hooks in ${source}: expected a list of hooks`, {
      hint: 'Write hooks: followed by a list of hooks (each with id, event and action).',
      details: { source },
    });
  }
  return list.map((raw, i) => normalizeHook(raw, source, defaultLayer, i));
}

function section(config: unknown, key: string): unknown {
  return isRecord(config) ? config[key] : undefined;
}

/**
 * The ordered hooks of a thread: user, directive, builtin, context, project, infra, each with
 * its layer (explicit `layer` wins), stable-sorted by layer.
 */
export function buildHookList(input: HookLayerInput): Hook[] {
  const { user, directive, hookConditions: hc, project } = input;
  const all = [
    ...(user ? normalizeHooks(user.hooks, user.source, LAYER.user) : []),
    ...(directive ? normalizeHooks([...directive.hooks], directive.source, LAYER.directive) : []),
    ...(hc
      ? normalizeHooks(section(hc.config, 'builtin_hooks'), `${hc.source} builtin_hooks`, LAYER.builtin)
      : []),
    ...(hc
      ? normalizeHooks(section(hc.config, 'context_hooks'), `${hc.source} context_hooks`, LAYER.context)
      : []),
    ...(project ? normalizeHooks(project.hooks, project.source, LAYER.project) : []),
    ...(hc ? normalizeHooks(section(hc.config, 'infra_hooks'), `${hc.source} infra_hooks`, LAYER.infra) : []),
  ];
  return all.sort((a, b) => a.layer - b.layer); // Array#sort is stable
}

/**
 * The hooks `resolve_extends` consults, in their fixed order: project, user, builtin — not
 * sorted by layer, and never the directive's own hooks (a directive cannot re-parent itself).
 */
export function buildResolveExtendsHooks(input: Omit<HookLayerInput, 'directive'>): Hook[] {
  const { user, hookConditions: hc, project } = input;
  return [
    ...(project ? normalizeHooks(project.hooks, project.source, LAYER.project) : []),
    ...(user ? normalizeHooks(user.hooks, user.source, LAYER.user) : []),
    ...(hc
      ? normalizeHooks(section(hc.config, 'builtin_hooks'), `${hc.source} builtin_hooks`, LAYER.builtin)
      : []),
  ].filter((hook) => hook.event === 'resolve_extends');
}

const KIND_PREFIX = /^(?:tool|directive|knowledge|config):/;

/** An item id without its canonical `kind:` prefix (`knowledge:a/b` → `a/b`). */
export function bareItemId(itemId: string): string {
  return itemId.replace(KIND_PREFIX, '');
}

/** Whether a suppress list names this hook (by its id). */
export function isHookSuppressed(hook: Hook, suppress: readonly string[]): boolean {
  return suppress.includes(hook.id);
}

/**
 * Whether a suppress list names this action's item: the full item id, with or without a
 * `kind:` prefix — never a basename, so suppressing `Behavior` does not hide `a/b/Behavior`.
 */
export function isActionSuppressed(action: HookAction, suppress: readonly string[]): boolean {
  if (action.item_id === undefined) return false;
  const id = bareItemId(action.item_id);
  return suppress.some((entry) => bareItemId(entry) === id);
}
