/**
 * Thread ids are `<directive>/<leaf>-<epoch_ms>` (DECISIONS 5): readable, sortable by start
 * time, and unique — on a collision the millisecond part is incremented.
 */
export function makeThreadId(
  directiveId: string,
  nowMs: number,
  isTaken: (id: string) => boolean = () => false,
): string {
  const leaf = directiveId.split('/').pop() || directiveId;
  let stamp = Math.floor(nowMs);
  let id = `${directiveId}/${leaf}-${stamp}`;
  while (isTaken(id)) {
    stamp += 1;
    id = `${directiveId}/${leaf}-${stamp}`;
  }
  return id;
}
