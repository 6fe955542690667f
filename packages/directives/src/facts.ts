/**
 * What sign-time validation needs to know about a directive or knowledge item (the executor
 * applies the extractor's validation_schema to these facts; it cannot parse these kinds itself).
 */
import type { FactsReader } from '@ryeos/executor';
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
