/**
 * The `load` operation (interfaces spec §2.2): read a verified item from the cascade or a named
 * space, and optionally copy it byte-for-byte into project or user space.
 */
import { existsSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import type { Fix } from '@ryeos/lillux';
import { RyeError, writeFileAtomic } from '@ryeos/lillux';
import type { ItemContext } from './context.js';
import type { ToolMetadata } from './metadata.js';
import { extractToolMetadata } from './metadata.js';
import { parameterSummary } from './parameter-summary.js';
import type { SignableKind } from './refs.js';
import { canonicalRef, TYPE_DIRS } from './refs.js';
import type { ResolvedItem } from './resolve.js';
import type { Space, SpaceName } from './spaces.js';
import { toolParameterSchema } from './tool-parameters.js';
import { readVerifiedItem } from './verified-read.js';

export interface LoadRequest {
  kind: SignableKind;
  id: string;
  /** Look only in this space (default: project → user → system). */
  source?: SpaceName;
  /** Copy the item here when it differs from where it was found. */
  destination?: Exclude<SpaceName, 'system'>;
}

// A type, not an interface: it stays assignable to the generic `Envelope`.
export type LoadResponse = {
  status: 'success';
  item_id: string;
  type: SignableKind;
  content: string;
  metadata: { name: string; path: string; extension: string; version?: string };
  path: string;
  source: SpaceName;
  copied_to?: SpaceName;
  destination_path?: string;
  /** Files copied along with a runtime (its `anchor.lib` folder), each to be signed in its new space. */
  copied_files?: string[];
  /** A tool's parameters, one line each (`{path: "string, required — …"}`); absent when it declares none. */
  parameters?: Record<string, string>;
  warnings?: string[];
  hint?: string;
  /** After copying a system item: signing the copies is what makes them run (as data). */
  fix?: Fix;
};

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
  if (kind === 'config' && request.destination === 'user') {
    // User config decides trust for every project (bundles.yaml registers bundles whose keys
    // vouch for system items; hooks run in every thread), and config may be unsigned: a copy
    // there is a person's decision, never one call.
    throw new RyeError(
      'PERMISSION',
      `Refusing to copy ${ref} into user space: user config applies to every project`,
      {
        hint: 'Review the file and copy it into $USER_SPACE/.ai/config yourself, or load it to project space.',
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
  if (kind === 'config' && located.space.name === 'user') {
    // User config holds credentials (server configs) and decides trust: as for the file tools,
    // it is never served to a caller.
    throw new RyeError(
      'PERMISSION',
      `Refusing to load ${ref} from user space: user config is not served to callers`,
      {
        hint: 'Read or copy it yourself; load config from project space.',
      },
    );
  }
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
  const metadata = kind === 'tool' ? toolMetadata(context, located, text) : undefined;
  const schema = metadata && toolParameterSchema(metadata);
  if (schema) response.parameters = parameterSummary(schema);
  if (request.destination && request.destination !== located.space.name) {
    const target = context.spaces.byName(request.destination);
    if (!target) throw new RyeError('VALIDATION', `No ${request.destination} space: pass a project path`);
    const typeRoot = join(target.base, '.ai', TYPE_DIRS[kind]);
    const destination = join(typeRoot, `${id}${located.extension}`);
    refuseEscapingDestination(destination, target.base);
    // A runtime's library folder (`anchor.lib`, e.g. the node launcher) goes along: the copy
    // runs with its own `{runtime_lib}`, which must exist and verify in the new space. Every
    // file is read, verified and its destination checked before anything is written.
    const library = metadata ? await runtimeLibrary(context, located, metadata, target) : [];
    await writeFileAtomic(destination, bytes, { mkdirs: true });
    for (const file of library) await writeFileAtomic(file.destination, file.bytes, { mkdirs: true });
    response.copied_to = request.destination;
    response.destination_path = destination;
    if (library.length) response.copied_files = library.map((file) => file.destination);
    if (located.space.name === 'system') {
      const refs = [ref, ...library.map((file) => file.ref)];
      const copies = library.length ? 'the copies before they run' : 'the copy before it runs';
      response.fix = { action: 'sign', refs, space: request.destination };
      response.hint = `The bundle key vouches only for system items: sign ${copies} in ${request.destination} space.`;
    }
  }
  return response;
}

/** A tool's metadata, read from the verified text (undefined when it cannot be read). */
function toolMetadata(
  context: ItemContext,
  item: { path: string; extension: string },
  text: string,
): ToolMetadata | undefined {
  const parser = context.kinds.peek('tool')?.parsers[item.extension];
  if (!parser) return undefined;
  try {
    return extractToolMetadata(text, item.path, parser, context.cache);
  } catch {
    return undefined; // load still returns the content; execute and search report the metadata error
  }
}

/** Every file under `dir`, depth first, in name order. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

/**
 * The library folder a runtime declares (`anchor.lib`), to copy beside its copy: each file read
 * and verified as a tool of the runtime's own space, its destination checked. Nothing is written.
 */
async function runtimeLibrary(
  context: ItemContext,
  runtime: ResolvedItem,
  metadata: ToolMetadata,
  target: Space,
): Promise<Array<{ ref: string; destination: string; bytes: Buffer }>> {
  const lib = (metadata.anchor as { lib?: unknown } | undefined)?.lib;
  if (typeof lib !== 'string') return [];
  const typeRoot = join(runtime.space.base, '.ai', TYPE_DIRS.tool);
  const libDir = join(dirname(runtime.path), lib);
  // A library folder is the runtime's own: inside its space's tools folder, a real folder.
  if (
    relative(typeRoot, libDir).startsWith('..') ||
    !lstatSync(libDir, { throwIfNoEntry: false })?.isDirectory()
  )
    return [];
  const extensions = (await context.kinds.get('tool')).extensions;
  const files: Array<{ ref: string; destination: string; bytes: Buffer }> = [];
  for (const path of filesUnder(libDir)) {
    const extension = extname(path);
    if (!extensions.includes(extension)) continue;
    const libId = relative(typeRoot, path).slice(0, -extension.length).split(sep).join('/');
    const { bytes } = await readVerifiedItem(context, 'tool', libId, {
      within: runtime.space,
      extensions: [extension],
    });
    const destination = join(target.base, '.ai', TYPE_DIRS.tool, `${libId}${extension}`);
    refuseEscapingDestination(destination, target.base);
    files.push({ ref: canonicalRef('tool', libId), destination, bytes });
  }
  return files;
}

/**
 * Refuses a copy whose folder leads out of the destination space once symlinks are resolved (a
 * project's `.ai/tools/acme` could link into the user's own space, or anywhere else).
 */
function refuseEscapingDestination(destination: string, spaceBase: string): void {
  let existing = dirname(destination);
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const real = realpathSync.native(existing);
  const root = realpathSync.native(spaceBase);
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
