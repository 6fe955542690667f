/**
 * A fork's registration is handed on as callbacks (prepare calls `register`, the budget claim
 * calls `unregister` when a sibling wins the last slot or budget): detached from their object,
 * they still take the row and give it back, so a refused child leaves no row behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { claimSlotAndBudget, Registration } from '../src/lifecycle/register.js';
import { openThreadStore, type ThreadStore } from '../src/store/index.js';

let root: string;
let stateRoot: string;
let store: ThreadStore;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'rye-registration-'));
  stateRoot = join(root, '.ai', 'state', 'threads');
  store = openThreadStore(stateRoot, { markStale: false });
});

afterEach(async () => {
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

it('a child refused its budget at the claim leaves no row, through the detached callbacks', async () => {
  await store.registry.register('acme/mom/mom-1', 'acme/mom');
  await store.ledger.register('acme/mom/mom-1', 0.05);
  const parent = { threadId: 'acme/mom/mom-1', limits: {}, capabilities: [] };
  const { register, unregister } = new Registration(store, 'acme/kid', parent.threadId, stateRoot, undefined);
  const id = await register();
  expect(await store.registry.exists(id)).toBe(true);
  await expect(claimSlotAndBudget(store, id, parent, undefined, 0.1, unregister)).rejects.toMatchObject({
    failure: { code: 'LIMIT' },
  });
  expect(await store.registry.exists(id)).toBe(false);
  expect(await store.registry.listChildren(parent.threadId)).toEqual([]);
});
