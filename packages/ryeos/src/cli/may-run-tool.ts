/**
 * Whether `rye execute <args>` may run a tool here: its ref names a tool or no kind, and no flag
 * sends it elsewhere or only checks it. A wrong guess costs a thread that never runs anything.
 */
export function mayRunTool(args: string[], env: Record<string, string | undefined>): boolean {
  if (env.RYE_WARM_WORKERS === '0') return false;
  if (args.some((arg) => /^--(dry-run|async|target|thread)\b/.test(arg))) return false;
  const ref = args.find((arg) => !arg.startsWith('-'));
  const kind = ref === undefined ? undefined : /^([a-z]+):/.exec(ref)?.[1];
  return ref !== undefined && (kind === undefined || kind === 'tool');
}
