import { httpError } from './http.js';

/** `major.minor` of a version string (`0.1.7` → `0.1`). */
export function majorMinor(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

/** A client built for another major.minor may push items this server reads differently: 409. */
export function checkSystemVersion(clientVersion: unknown, serverSystemVersion: string): void {
  if (typeof clientVersion !== 'string' || !/^\d+\.\d+/.test(clientVersion)) {
    throw httpError(
      400,
      'VALIDATION',
      "'system_version' must be a version such as 0.1",
      'Send your ryeos version.',
    );
  }
  if (majorMinor(clientVersion) !== serverSystemVersion) {
    throw httpError(
      409,
      'VALIDATION',
      `Version mismatch: this client runs ryeos ${majorMinor(clientVersion)}, the server ${serverSystemVersion}`,
      `Use a ryeos ${serverSystemVersion}.x client with this server, or upgrade the server.`,
    );
  }
}
