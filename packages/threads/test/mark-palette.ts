/** A palette of one marking tool and the directive return, for loop tests that count calls. */
import type { Palette, PaletteEntry } from '../src/runner/palette.js';
import { DIRECTIVE_RETURN_ID } from '../src/runner/palette.js';

const ENTRIES: PaletteEntry[] = [
  {
    name: 'acme_mark',
    description: 'mark',
    schema: { type: 'object', properties: {} },
    kind: 'tool',
    itemId: 'acme/mark',
    primary: 'execute',
  },
  {
    name: 'rye_directive_return',
    description: 'return',
    schema: { type: 'object', properties: {} },
    kind: 'directive_return',
    itemId: DIRECTIVE_RETURN_ID,
    primary: 'execute',
  },
];

export const MARK_PALETTE: Palette = {
  entries: ENTRIES,
  byName: new Map(ENTRIES.map((e) => [e.name, e])),
  warnings: [],
};

/** The model's call of the marking tool, tagged. */
export const mark = (tag: string) => ({ name: 'acme_mark', id: `toolu_${tag}`, input: { tag } });
