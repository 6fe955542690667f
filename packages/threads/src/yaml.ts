/**
 * The `yaml` package loads where YAML is read or written (agent config, providers, the knowledge
 * transcript), not with the runner: a detached thread handed its setup starts its loop without
 * it (its ~80 modules cost ~20 ms). Synchronous (`createRequire`), like the code that uses it.
 */
import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let loaded: Yaml | undefined;

export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
