/**
 * The `load` operation (interfaces spec §2.2): read a verified item from the cascade or a named
 * space, and optionally copy it byte-for-byte into project or user space.
 */
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { RyeError, writeFileAtomic } from '@ryeos/lillux';
import type { ItemContext } from './context.js';
import type { SignableKind } from './refs.js';
import { canonicalRef, TYPE_DIRS } from './refs.js';
import type { SpaceName } from './spaces.js';
import { readVerifiedItem } from './verified-read.js';

export interface LoadRequest {
  kind: SignableKind;
  id: string;
  /** Look only in this space (default: project → user → system). */
  source?: SpaceName;
  /** Copy the item here when it differs from where it was found. */
  destination?: Exclude<SpaceName, 'system'>;
}

export interface LoadResponse {
  status: 'success';
  item_id: string;
  type: SignableKind;
  content: string;
  metadata: { name: string; path: string; extension: string; version?: string };
  path: string;
  source: SpaceName;
  copied_to?: SpaceName;
  destination_path?: string;
  warnings?: string[];
  hint?: string;
}

const VERSION = /(?:__version__\s*=\s*|version\s*[:=]\s*)["']([^"']+)["']/;

export async function loadItem(context: ItemContext, request: LoadRequest): Promise<LoadResponse> {
  const { kind, id } = request;
  const ref = canonicalRef(kind, id);
  if ((request.source as string) === 'registry') {
    throw new RyeError(
      'UNAVAILABLE',
      'Loading from the registry is not available yet in this version of ryeos.',
      {
        hint: 'Load from project, user or system space.',
      },
    );
  }
  // Read once, verified, and the same bytes returned and copied. Config may be unsigned.
  const {
    item: located,
    bytes,
    text,
    verification,
  } = await readVerifiedItem(context, kind, id, {
    ...(request.source ? { only: request.source } : {}),
    allowUnsigned: kind === 'config',
  });
  const version = VERSION.exec(text)?.[1];
  const response: LoadResponse = {
    status: 'success',
    item_id: ref,
    type: kind,
    content: text,
    metadata: {
      name: id.split('/').pop() ?? id,
      path: located.path,
      extension: located.extension,
      ...(version ? { version } : {}),
    },
    path: located.path,
    source: located.space.name,
    ...(verification.warnings.length ? { warnings: verification.warnings } : {}),
  };
  if (request.destination && request.destination !== located.space.name) {
    const target = context.spaces.byName(request.destination);
    if (!target) throw new RyeError('VALIDATION', `No ${request.destination} space: pass a project path`);
    const typeRoot = join(target.base, '.ai', TYPE_DIRS[kind]);
    const destination = join(typeRoot, `${id}${located.extension}`);
    refuseEscapingDestination(destination, target.base);
    await writeFileAtomic(destination, bytes, { mkdirs: true });
    response.copied_to = request.destination;
    response.destination_path = destination;
    if (located.space.name === 'system') {
      response.hint = `The bundle key vouches only for system items: sign the copy before it runs — rye sign ${ref}${request.destination === 'user' ? ' --space user' : ''}`;
    }
  }
  return response;
}

/**
 * Refuses a copy whose folder leads out of the destination space once symlinks are resolved (a
 * project's `.ai/tools/acme` could link into the user's own space, or anywhere else).
 */
function refuseEscapingDestination(destination: string, spaceBase: string): void {
  let existing = dirname(destination);
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const real = realpathSync(existing);
  const root = realpathSync(spaceBase);
  const inside = real === root || real.startsWith(root + sep);
  if (!inside || lstatSync(destination, { throwIfNoEntry: false })?.isSymbolicLink()) {
    throw new RyeError(
      'PERMISSION',
      `Refusing to copy to ${destination}: it leads out of the space (${real})`,
      {
        hint: 'Replace the symlinked folder in the destination .ai/ with a real folder, then load again.',
        details: { destination, real },
      },
    );
  }
}
