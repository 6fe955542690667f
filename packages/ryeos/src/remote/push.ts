/**
 * `push`: the manifests of project and user space, built into the project's store, their closure
 * offered to the remote (`has`), only the missing entries sent (`put`), then the pair published
 * under the project's name (`/push`). A second push of an unchanged project sends nothing.
 */
import type { ObjectStore } from '@ryeos/executor';
import { buildManifest } from '@ryeos/executor';
import type { RemoteHost, RemoteSession } from './session.js';
import { systemVersion } from './session.js';
import { missingOnRemote, putEntries } from './transfer.js';

export interface SpaceManifests {
  project_manifest_hash: string;
  user_manifest_hash: string;
  /** Every hash both manifests need, children first. */
  closure: string[];
  /** Files left out (links, special files), as the manifest builder lists them. */
  skipped: string[];
}

export interface PushResult {
  remote_name: string;
  project_name: string;
  project_manifest_hash: string;
  user_manifest_hash: string;
  /** Objects sent by this push (0 when the remote had them all). */
  objects_synced: number;
  total_objects: number;
  ref_published: boolean;
  skipped: string[];
  message: string;
}

/** Builds the manifests of project and user space into `store` (nothing is sent). */
export async function spaceManifests(
  host: RemoteHost,
  store: ObjectStore,
  sync: RemoteSession['config']['sync'],
): Promise<SpaceManifests> {
  const project = buildManifest(store, {
    space: 'project',
    base: host.projectPath,
    ...(sync ? { sync } : {}),
  });
  const user = buildManifest(store, { space: 'user', base: host.userSpace, ...(sync ? { sync } : {}) });
  const closure = [...new Set([...project.closure, ...user.closure])];
  return {
    project_manifest_hash: project.hash,
    user_manifest_hash: user.hash,
    closure,
    skipped: [...project.skipped, ...user.skipped],
  };
}

export async function pushSpaces(
  host: RemoteHost,
  session: RemoteSession,
  store: ObjectStore,
): Promise<PushResult> {
  const manifests = await spaceManifests(host, store, session.config.sync);
  // Entries go children first and each manifest after everything it names, so a server that holds
  // both manifests holds their closure: an unchanged project costs one small `has`.
  const manifestsMissing = await missingOnRemote(session.client, [
    manifests.project_manifest_hash,
    manifests.user_manifest_hash,
  ]);
  const missing = manifestsMissing.length ? await missingOnRemote(session.client, manifests.closure) : [];
  const sent = await putEntries(session.client, store, missing);
  const published = await session.client.push({
    project_name: session.config.projectName,
    project_manifest_hash: manifests.project_manifest_hash,
    user_manifest_hash: manifests.user_manifest_hash,
    system_version: systemVersion(),
  });
  return {
    remote_name: published.remote_name ?? session.remote.name,
    project_name: session.config.projectName,
    project_manifest_hash: manifests.project_manifest_hash,
    user_manifest_hash: manifests.user_manifest_hash,
    objects_synced: sent,
    total_objects: manifests.closure.length,
    ref_published: published.status === 'ok',
    skipped: manifests.skipped,
    message: sent
      ? `Pushed ${sent} of ${manifests.closure.length} objects to '${session.remote.name}'.`
      : `'${session.remote.name}' already had all ${manifests.closure.length} objects.`,
  };
}
