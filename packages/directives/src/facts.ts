/**
 * What sign-time validation needs to know about a directive or knowledge item (the executor
 * applies the extractor's validation_schema to these facts; it cannot parse these kinds itself).
 */
import type { FactsReader, ItemReaders, SearchableFields } from '@ryeos/executor';
import { clipText } from '@ryeos/lillux';
import { parseDirective } from './directive.js';
import { parseKnowledge } from './knowledge.js';

export const directiveFacts: FactsReader = (text, path) => {
  const d = parseDirective(text, path);
  return {
    name: d.name,
    version: d.version,
    description: d.description,
    category: d.category,
    author: d.author,
  };
};

export const knowledgeFacts: FactsReader = (text, path) => {
  const stem = path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '');
  const k = parseKnowledge(text, path, stem);
  return {
    name: typeof k.fields.name === 'string' ? k.fields.name : undefined,
    title: k.title,
    version: k.version,
    entry_type: k.entry_type,
    category: k.category,
  };
};

/** Search reads directives and knowledge through these (statically: never by running the item). */
type SearchFields = SearchableFields;

const preview = (text: string) => clipText(text.replace(/\s+/g, ' ').trim(), 200);

export function directiveSearchFields(text: string, path: string): SearchFields {
  const d = parseDirective(text, path);
  return {
    name: d.name,
    title: d.name,
    ...(d.description ? { description: d.description } : {}),
    ...(d.category !== undefined ? { category: d.category } : {}),
    ...(d.version ? { version: d.version } : {}),
    preview: preview(d.body || d.content),
    metadata: {
      ...(d.version ? { version: d.version } : {}),
      ...(d.author ? { author: d.author } : {}),
      ...(d.model ? { model: d.model } : {}),
      inputs: d.inputs.map((i) => i.name),
      ...(d.extends ? { extends: d.extends } : {}),
      ...d.metadata,
    },
  };
}

export function knowledgeSearchFields(text: string, path: string, id: string): SearchFields {
  const k = parseKnowledge(text, path, id);
  const description = typeof k.fields.description === 'string' ? k.fields.description : undefined;
  return {
    name: k.name,
    title: k.title ?? k.name,
    ...(description ? { description } : {}),
    ...(k.category !== undefined ? { category: k.category } : {}),
    ...(k.version ? { version: k.version } : {}),
    ...(k.tags ? { tags: k.tags } : {}),
    preview: preview(k.body),
    metadata: { ...k.fields },
  };
}

/**
 * Names what the readers below return: a system bundle's index keeps their search fields under
 * this id and is used only by readers of the same id. Bump it whenever their output changes
 * (the bundle-index test in ryeos fails until the bundle is re-signed).
 */
export const READERS_ID = '@ryeos/directives:1';

/**
 * The readers of directives and knowledge, registered once with the executor
 * (`Executor.create({ readers: ITEM_READERS })`): sign, load, search and the moved check use them.
 */
export const ITEM_READERS: ItemReaders = Object.freeze({
  directive: Object.freeze({ facts: directiveFacts, search: directiveSearchFields, id: READERS_ID }),
  knowledge: Object.freeze({ facts: knowledgeFacts, search: knowledgeSearchFields, id: READERS_ID }),
});
