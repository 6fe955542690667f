export type { ItemKind, ParsedRef, SignableKind } from './refs.js';
export { canonicalRef, ITEM_KINDS, normalizeId, parseRef, TYPE_DIRS } from './refs.js';
