/**
 * `--database-url` arrives on the command line, which every local user can read (`ps`,
 * /proc/<pid>/cmdline): a password in it would let them write jobs that workers run.
 */
import { RyeError } from '@ryeos/lillux';

/** True when a connection string carries a password (URL userinfo, `?password=`, or `password=` keyword). */
export function carriesPassword(connection: string): boolean {
  if (/(^|[\s?&])password\s*=/i.test(connection)) return true;
  const userinfo = /^[a-z][\w+.-]*:\/\/([^/?#]*)@/i.exec(connection)?.[1];
  return userinfo?.includes(':') === true;
}

/** Refuses a `--database-url` that carries a password, before anything connects with it. */
export function checkArgvDatabaseUrl(connection: string): void {
  if (!carriesPassword(connection)) return;
  throw new RyeError(
    'VALIDATION',
    '--database-url carries a password, which any local user can read in the process list',
    {
      hint: 'Put the URL with its password in RYE_DATABASE_URL instead, or give the password through PGPASSWORD or ~/.pgpass and pass --database-url postgres://user@host:5432/db.',
    },
  );
}
