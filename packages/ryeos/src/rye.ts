/**
 * The facade: one `Rye` per project wires the layers into the four operations and key
 * management. Settings are read once, when it is made; nothing is loaded at import, and the
 * executor is created on first use.
 */
import { resolve } from 'node:path';
import { ITEM_READERS } from '@ryeos/directives';
import type { Envelope, RyeSettings } from '@ryeos/executor';
import { Executor, isSignableKind, kindPrefix, parseRef } from '@ryeos/executor';
import { RyeError, toErrorEnvelope } from '@ryeos/lillux';
import type { PrimaryCall, PrimaryDispatch, ResumeResult } from '@ryeos/threads';
import { systemBundles } from './bundles.js';
import type { ExecuteCaller, ExecuteRequest } from './execute/route.js';
import type { LoadEnvelope, LoadRequest } from './load-item.js';
import type { SearchEnvelope, SearchRequest } from './search-items.js';
import { entrySettings } from './settings.js';
import type { SignEnvelope } from './sign.js';

export type { ExecuteCaller, ExecuteRequest } from './execute/route.js';
export type { LoadEnvelope, LoadRequest } from './load-item.js';
export type { SearchEnvelope, SearchRequest } from './search-items.js';
export type { Envelope };

export interface RyeOptions {
  projectPath?: string;
  /** User space base; wins over `$USER_SPACE` of `env`. */
  userSpace?: string;
  /** The environment to read settings from and hand to tools (default: this process's). */
  env?: Record<string, string | undefined>;
  /** Settings already parsed by the entry point (then `env` and `userSpace` are not read). */
  settings?: RyeSettings;
  /**
   * After an async fork, keep the next one's runner started (default true: a long-lived host,
   * such as the MCP server or an application). The CLI, which exits at once, says false.
   */
  spareRunner?: boolean;
}

export class Rye {
  readonly projectPath: string;
  readonly settings: RyeSettings;
  private executorPromise: Promise<Executor> | undefined;

  private readonly spareRunner: boolean;

  constructor(options: RyeOptions = {}) {
    this.settings = options.settings ?? entrySettings(options.env, options.userSpace);
    this.projectPath = resolve(options.projectPath ?? process.cwd());
    this.spareRunner = options.spareRunner ?? true;
  }

  get userSpace(): string {
    return this.settings.userSpace;
  }

  get env(): Readonly<Record<string, string | undefined>> {
    return this.settings.env;
  }

  executor(): Promise<Executor> {
    this.executorPromise ??= (async () =>
      Executor.create({
        projectPath: this.projectPath,
        userSpace: this.settings.userSpace,
        systemBundles: await systemBundles(this.settings.userSpace),
        settings: this.settings,
        readers: ITEM_READERS,
      }))();
    // A failed start (e.g. a broken bundles.yaml) is not remembered: the next call tries again.
    this.executorPromise.catch(() => {
      this.executorPromise = undefined;
    });
    return this.executorPromise;
  }

  /**
   * Runs an item (spec items §7): validates the whole request against the execute schema and
   * matrix first, then routes it. Returns an envelope; never throws.
   */
  async execute(request: ExecuteRequest, caller: ExecuteCaller = {}): Promise<Envelope> {
    // Loaded on first use (with the chain runner behind it): search and load never need it.
    let route: typeof import('./execute/route.js').routeExecute;
    try {
      ({ routeExecute: route } = await import('./execute/route.js'));
    } catch (error) {
      return toErrorEnvelope(error, { item_id: typeof request?.item_id === 'string' ? request.item_id : '' });
    }
    return route(
      {
        settings: this.settings,
        executor: () => this.executor(),
        threads: {
          projectPath: this.projectPath,
          dispatch: this.threadDispatch(),
          spareRunner: this.spareRunner,
        },
      },
      request,
      caller,
    );
  }

  /** `dispatch` as a thread's host calls it: it awaits each call's `beforeEffects` itself. */
  threadDispatch(): PrimaryDispatch {
    return Object.assign((call: PrimaryCall) => this.dispatch(call), { awaitsBeforeEffects: true });
  }

  /**
   * One of the four operations for a managed thread's tool call (or a hook's action): the same
   * paths, schemas and checks as any caller; `project_path` is this project's and cannot be
   * changed by the model. A tool run awaits `beforeEffects` once it is verified and prepared,
   * right before it runs; every other operation awaits it first.
   */
  async dispatch(call: PrimaryCall): Promise<Envelope> {
    const { project_path: _ignored, ...args } = call.args;
    if (call.primary !== 'execute' && call.beforeEffects) {
      try {
        await call.beforeEffects();
      } catch (error) {
        return toErrorEnvelope(error, { item_id: typeof args.item_id === 'string' ? args.item_id : '' });
      }
    }
    switch (call.primary) {
      case 'search':
        return this.search(args as SearchRequest);
      case 'load':
        return this.load(args as LoadRequest);
      case 'sign': {
        // A thread signs exactly the one item its permission check judged, in the project:
        // never a path (a symlinked folder named like a ref could point anywhere), never a
        // glob, never another space.
        let ref: string;
        try {
          ref = threadSignRef(args);
        } catch (error) {
          return toErrorEnvelope(error, { item_id: typeof args.item_id === 'string' ? args.item_id : '' });
        }
        return this.sign(ref, { space: 'project' });
      }
      case 'execute':
        return this.execute(
          {
            ...(args as ExecuteRequest),
            ...(call.signal ? { signal: call.signal } : {}),
            ...(call.onOutput ? { onOutput: call.onOutput } : {}),
          },
          {
            ...(call.threadId ? { threadId: call.threadId } : {}),
            ...(call.withheldEnv ? { withheldEnv: call.withheldEnv } : {}),
            ...(call.beforeEffects ? { beforeEffects: call.beforeEffects } : {}),
          },
        );
      default:
        return toErrorEnvelope(new RyeError('VALIDATION', `Unknown operation '${String(call.primary)}'`));
    }
  }

  /**
   * Continues a finished thread (the last of its chain) with a new message, in a new thread that
   * carries its inputs and the tail of its conversation (spec threads §10.6).
   */
  async resumeThread(
    threadId: string,
    message: string,
    options: { model?: string; signal?: AbortSignal; handoff?: boolean; async?: boolean } = {},
  ): Promise<ResumeResult> {
    // Through fork.js, loaded on first use: search and load never load the threads layer.
    const { resumeForkedThread } = await import('./execute/fork.js');
    const host = { settings: this.settings, projectPath: this.projectPath, executor: await this.executor() };
    return resumeForkedThread({ ...host, dispatch: this.threadDispatch() }, threadId, message, options);
  }

  /** Searches items (interfaces §2.1); returns an envelope, never throws. */
  async search(request: SearchRequest): Promise<SearchEnvelope> {
    // Loaded on first use, as load is: a `rye execute` never loads either.
    const { searchEnvelope } = await import('./search-items.js');
    return searchEnvelope(() => this.executor(), request);
  }

  /** Reads (and optionally copies) a verified item (interfaces §2.2); never throws. */
  async load(request: LoadRequest): Promise<LoadEnvelope> {
    const { loadEnvelope } = await import('./load-item.js');
    return loadEnvelope(() => this.executor(), request);
  }

  /**
   * Signs items with the user's key: refs, globs or paths of item files, in project (default) or
   * user space. Returns an envelope (`partial` when only some items were signed); never throws.
   */
  async sign(refs: string | readonly string[], options: { space?: string } = {}): Promise<SignEnvelope> {
    const list = typeof refs === 'string' ? [refs] : [...refs];
    try {
      const { signEnvelope, signRefs } = await import('./sign.js');
      return signEnvelope(await signRefs(this.settings, await this.executor(), list, options.space));
    } catch (error) {
      const envelope = toErrorEnvelope(error, { item_id: list.join(' ') });
      return { ...envelope, signed: [], failed: [], summary: '0 signed, 0 failed', total: 0 };
    }
  }

  /** Creates the signing key (if missing) and trusts it in user space. */
  async generateKeys(options: { force?: boolean } = {}) {
    const { generateKeys } = await import('./keys.js');
    return generateKeys(this.settings, await this.executor(), options);
  }

  async trustKey(publicKeyPem: string, options: { owner?: string; space?: 'project' | 'user' } = {}) {
    const { trustPublicKey } = await import('./keys.js');
    return trustPublicKey(this.settings, await this.executor(), publicKeyPem, options);
  }

  /**
   * A remote action (push, pull, status, execute, threads, thread_status, list, trust) against a
   * remote of `.ai/config/remotes/remotes.yaml` (`params.remote`, default `default`). Throws a
   * RyeError with a hint on any failure.
   */
  async remote(
    action: string,
    params: Record<string, unknown> = {},
    options: { signal?: AbortSignal } = {},
  ): Promise<Record<string, unknown>> {
    const { runRemoteAction } = await import('./remote/actions.js');
    return runRemoteAction(this.remoteHost(), action, params, options.signal);
  }

  /** Adds (or replaces) a named remote in user (default) or project space's remotes config. */
  async addRemote(name: string, url: string, options: { keyEnv?: string; space?: 'user' | 'project' } = {}) {
    const { addRemote } = await import('./remote/add.js');
    return addRemote({ user: this.userSpace, project: this.projectPath }, name, url, options);
  }

  private remoteHost() {
    return {
      projectPath: this.projectPath,
      userSpace: this.userSpace,
      env: this.env,
      executor: () => this.executor(),
    };
  }

  async listKeys() {
    const { listKeys } = await import('./keys.js');
    return listKeys(await this.executor());
  }
}

/** The canonical ref a thread's sign call names: `item_type` and `item_id` must agree. */
function threadSignRef(args: Record<string, unknown>): string {
  const id = typeof args.item_id === 'string' ? args.item_id.trim() : '';
  const type = typeof args.item_type === 'string' ? args.item_type : undefined;
  const prefix = kindPrefix(id);
  const kind = prefix ?? type;
  if (!kind || !isSignableKind(kind)) {
    throw new RyeError(
      'VALIDATION',
      `Cannot sign '${id}': name the kind (item_type, or a ref such as knowledge:acme/notes)`,
    );
  }
  if (prefix && type && prefix !== type) {
    throw new RyeError('VALIDATION', `item_type '${type}' does not match the ref '${id}'`);
  }
  const bare = prefix ? id.slice(prefix.length + 1) : id;
  if (/[*?[\]{}]/.test(bare)) {
    throw new RyeError('VALIDATION', `A thread signs one item at a time: '${id}' is a pattern`, {
      hint: 'Sign each item by its id.',
    });
  }
  if (args.source !== undefined && args.source !== 'project') {
    throw new RyeError(
      'PERMISSION',
      `A thread signs items in the project space only, not '${String(args.source)}'`,
    );
  }
  return `${kind}:${parseRef(`${kind}:${bare}`).id}`;
}

export function createRye(options: RyeOptions = {}): Rye {
  return new Rye(options);
}
