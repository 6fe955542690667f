/**
 * A `ThreadHost` an embedder builds without the facade: its own executor and dispatch, the
 * standard primaries by default, and the signer as a value or a key folder.
 */
import type { Executor, RyeSettings } from '@ryeos/executor';
import { RyeError } from '@ryeos/lillux';
import { TOOL_DEFINITIONS, withoutProjectPath } from '@ryeos/lillux/primaries';
import type { PrimaryDispatch, PrimaryToolSpec, ThreadHost } from './host.js';
import type { Signer } from './persistence/signer.js';
import type { ThreadStoreOpener } from './store/opener.js';

export interface ThreadHostOptions {
  /** Resolves, verifies and runs the thread's directive and its tools. */
  executor: Executor;
  /** Runs the four operations the thread's model calls; answers an envelope, never throws. */
  dispatch: PrimaryDispatch;
  /** The project whose `.ai/state/threads` holds the registry, ledger and records. */
  projectPath: string;
  /**
   * Who signs the thread's records: a `Signer` (e.g. `signerFromKeyPair`), or `{ keyDir }`, a
   * folder holding `private_key.pem` and `public_key.pem`. Default: the user's key folder
   * (`settings.signingKeyDir`). Its public key must be trusted for the records to verify later.
   */
  signer?: Signer | { keyDir: string };
  /** Default: the executor's settings. */
  settings?: RyeSettings;
  /** The operations offered to the model; default `standardPrimaries()`. */
  primaries?: readonly PrimaryToolSpec[];
  /**
   * Opens the project's thread store (registry and ledger) for each run and query; default the
   * SQLite store under `.ai/state/threads`. A detached run opens its own: see the README.
   */
  store?: ThreadStoreOpener;
}

let standard: readonly PrimaryToolSpec[] | undefined;

/**
 * The four operations as a thread's model is offered them: the same descriptions and schemas the
 * MCP server serves, without `project_path` (a thread's calls are bound to its project).
 */
export function standardPrimaries(): readonly PrimaryToolSpec[] {
  standard ??= Object.freeze(
    TOOL_DEFINITIONS.map((tool) => ({
      name: tool.name,
      description: tool.description,
      // A plain JSON Schema object; the readonly definition type has no index signature.
      inputSchema: withoutProjectPath(tool.inputSchema) as unknown as Record<string, unknown>,
    })),
  );
  return standard;
}

function isSigner(value: ThreadHostOptions['signer']): value is Signer {
  return typeof value === 'object' && value !== null && typeof (value as Signer).sign === 'function';
}

export function createThreadHost(options: ThreadHostOptions): ThreadHost {
  const { executor, dispatch, projectPath } = options;
  if (typeof dispatch !== 'function') {
    throw new RyeError('VALIDATION', 'createThreadHost needs a dispatch function', {
      hint: 'Pass dispatch: (call) => … that runs call.primary with call.args and answers its envelope.',
    });
  }
  if (typeof projectPath !== 'string' || projectPath === '') {
    throw new RyeError('VALIDATION', 'createThreadHost needs the project path', {
      hint: 'Pass projectPath: the absolute path of the folder that holds .ai/.',
    });
  }
  if (options.store !== undefined && typeof options.store !== 'function') {
    throw new RyeError('VALIDATION', 'createThreadHost: store must be a function that opens a thread store', {
      hint: 'Pass store: (projectPath) => yourStore (a ThreadStore, or a promise of one), or leave it out for SQLite.',
    });
  }
  let settings = options.settings ?? executor.settings;
  const signer = options.signer;
  let ownSigner: Signer | undefined;
  if (isSigner(signer)) ownSigner = signer;
  else if (signer !== undefined) {
    if (typeof signer.keyDir !== 'string' || signer.keyDir === '') {
      throw new RyeError('VALIDATION', 'createThreadHost: signer must be a Signer or { keyDir }', {
        hint: 'Pass signer: signerFromKeyPair(keyPair), or { keyDir: "/path/to/keys" } holding private_key.pem.',
      });
    }
    settings = { ...settings, signingKeyDir: signer.keyDir };
  }
  return {
    executor,
    settings,
    projectPath,
    dispatch,
    primaries: options.primaries ?? standardPrimaries(),
    ...(ownSigner ? { signer: ownSigner } : {}),
    ...(options.store ? { store: options.store } : {}),
  };
}
