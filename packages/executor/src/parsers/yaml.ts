/**
 * The `yaml/yaml` parser: a YAML tool, runtime or config file is one mapping. The `yaml` library
 * is loaded on first use. Errors name the file and line.
 */
import { createRequire } from 'node:module';
import { RyeError } from '@ryeos/lillux';

interface YamlModule {
  parseDocument(
    text: string,
    options?: Record<string, unknown>,
  ): {
    errors: { message: string; linePos?: [{ line: number; col: number }] }[];
    toJS(): unknown;
  };
}

let yaml: YamlModule | undefined;

function loadYaml(): YamlModule {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlModule;
  return yaml;
}

/** Parses YAML text that must be a mapping (an empty file is an empty mapping). */
export function parseYamlDocument(text: string, path: string): Record<string, unknown> {
  const document = loadYaml().parseDocument(text, { prettyErrors: true });
  const [first] = document.errors;
  if (first) {
    const line = first.linePos?.[0]?.line ?? 1;
    throw new RyeError(
      'VALIDATION',
      `Malformed metadata in ${path}:${line}: (file): valid YAML: ${first.message.split('\n')[0]}`,
      {
        hint: 'Fix the YAML syntax, then re-sign the item.',
        details: { path, line, field: '(file)' },
      },
    );
  }
  const value = document.toJS();
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new RyeError(
      'VALIDATION',
      `Malformed metadata in ${path}:1: (file): a YAML mapping at the top level`,
      {
        details: { path, line: 1, field: '(file)' },
      },
    );
  }
  return value as Record<string, unknown>;
}
