/**
 * What fixes an error, as data: the layer that meets the problem says which action fixes it, and
 * the caller's own layer renders it (the `rye` CLI as a command, MCP as a tool call, the API as
 * this object). A lower layer therefore never names a command its embedder may not have.
 */

/** The spaces an item can be signed or copied into (the system space is immutable). */
export type WritableSpace = 'project' | 'user';

export type Fix =
  /** Sign these items (again) where they are; refs are canonical, e.g. `tool:acme/fetch`. */
  | { readonly action: 'sign'; readonly refs: readonly string[]; readonly space: WritableSpace }
  /** A system item: copy it into a writable space, then sign the copy there. */
  | { readonly action: 'copy_to_space'; readonly ref: string; readonly to: WritableSpace }
  /** Create the signing key pair; `force` replaces the one that exists. */
  | { readonly action: 'generate_key'; readonly force: boolean }
  /** A person decides to trust the key that signed it (its public key file), in this space. */
  | { readonly action: 'trust_key'; readonly space: WritableSpace }
  /** Find the right id among the items of this kind. */
  | { readonly action: 'search'; readonly item_type: 'directive' | 'tool' | 'knowledge' }
  /** Read the item (its parameters, inputs or content) without running it. */
  | { readonly action: 'load'; readonly ref: string }
  /** List the threads of the project, to find a thread's id. */
  | { readonly action: 'list_threads' }
  /** Install the npm package that holds what is missing. */
  | { readonly action: 'install_package'; readonly name: string };

export type FixAction = Fix['action'];

const SPACES: ReadonlySet<unknown> = new Set<WritableSpace>(['project', 'user']);
const SEARCHABLE: ReadonlySet<unknown> = new Set(['directive', 'tool', 'knowledge']);

const isText = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** Each action's fields, checked: a fix read back from JSON is rendered only when well-formed. */
const WELL_FORMED: Readonly<Record<FixAction, (fix: Record<string, unknown>) => boolean>> = {
  sign: (fix) =>
    Array.isArray(fix.refs) && fix.refs.length > 0 && fix.refs.every(isText) && SPACES.has(fix.space),
  copy_to_space: (fix) => isText(fix.ref) && SPACES.has(fix.to),
  generate_key: (fix) => typeof fix.force === 'boolean',
  trust_key: (fix) => SPACES.has(fix.space),
  search: (fix) => SEARCHABLE.has(fix.item_type),
  load: (fix) => isText(fix.ref),
  list_threads: () => true,
  install_package: (fix) => isText(fix.name),
};

/** Whether `value` is a well-formed `Fix` (its action is one of the closed set, with its fields). */
export function isFix(value: unknown): value is Fix {
  if (typeof value !== 'object' || value === null) return false;
  const action = (value as { action?: unknown }).action;
  return typeof action === 'string' && Object.hasOwn(WELL_FORMED, action)
    ? WELL_FORMED[action as FixAction](value as Record<string, unknown>)
    : false;
}

/** The fix in words that fit every caller, e.g. "sign tool:acme/fetch in project space". */
export function describeFix(fix: Fix): string {
  switch (fix.action) {
    case 'sign':
      return `sign ${fix.refs.join(', ')} in ${fix.space} space`;
    case 'copy_to_space':
      return `copy ${fix.ref} to ${fix.to} space and sign the copy there`;
    case 'generate_key':
      return fix.force ? 'replace the signing key pair with a new one' : 'generate a signing key pair';
    case 'trust_key':
      return `trust the signer's public key in ${fix.space} space, if you know whose it is`;
    case 'search':
      return `search the ${fix.item_type}s for the right id`;
    case 'load':
      return `load ${fix.ref} to read what it takes`;
    case 'list_threads':
      return "list the project's threads";
    case 'install_package':
      return `install the npm package ${fix.name}`;
  }
}
