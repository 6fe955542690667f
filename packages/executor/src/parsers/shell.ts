/**
 * `shell/comment`: reads the metadata a shell tool declares in its leading comment header:
 *
 *   #!/usr/bin/env bash
 *   # rye:signed:…
 *   # __version__ = "1.0.0"
 *   # __executor_id__ = null
 *   # CONFIG_SCHEMA = {"type": "object"}
 *
 * The header ends at the first line that is neither a comment nor blank.
 */
import {
  assignField,
  checkFieldType,
  isKnownMetadataField,
  MalformedMetadataError,
  type MetadataParser,
  type ParsedMetadata,
} from './types.js';

/** `# NAME = value` (the value is validated separately). */
const ASSIGN_RE = /^#\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;
const DOUBLE_RE = /^"((?:[^"\\]|\\.)*)"$/;
const SINGLE_RE = /^'((?:[^'\\]|\\.)*)'$/;
const JSON_FIELDS = new Set(['CONFIG_SCHEMA', 'ENV_CONFIG', 'CONFIG', 'CONFIG_RESOLVE']);

type Parsed = { ok: true; value: unknown } | { ok: false; expected: string };

function parseScalar(raw: string): Parsed {
  if (raw === 'null' || raw === 'None') return { ok: true, value: null };
  const m = DOUBLE_RE.exec(raw) ?? SINGLE_RE.exec(raw);
  if (m) return { ok: true, value: (m[1] ?? '').replace(/\\(["'\\])/g, '$1') };
  return { ok: false, expected: `expected a quoted string or null, got \`${raw}\`` };
}

function parseJson(raw: string): Parsed {
  if (!raw.startsWith('{') && !raw.startsWith('[')) {
    return { ok: false, expected: `expected a single-line JSON object, got \`${raw}\`` };
  }
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (e) {
    return { ok: false, expected: `expected a single-line JSON object: ${(e as Error).message}` };
  }
}

export const parseShellMetadata: MetadataParser = (text, path) => {
  const result: ParsedMetadata = { fields: {}, lines: {} };
  const lines = text.split('\n');
  for (let idx = 0; idx < lines.length; idx++) {
    const line = (lines[idx] ?? '').trim();
    if (line === '') continue;
    if (!line.startsWith('#')) break;
    if (idx === 0 && line.startsWith('#!')) continue;
    const m = ASSIGN_RE.exec(line);
    if (!m) continue;
    const name = m[1] ?? '';
    const raw = m[2] ?? '';
    const isJson = JSON_FIELDS.has(name);
    if (!isJson && !(name.startsWith('__') && name.endsWith('__') && name.length > 4)) continue;
    const parsed = isJson ? parseJson(raw) : parseScalar(raw);
    const known = isKnownMetadataField(name);
    if (!parsed.ok) {
      if (known) throw new MalformedMetadataError(path, idx + 1, name, parsed.expected);
      continue;
    }
    if (known) {
      const wrong = checkFieldType(name, parsed.value, 'javascript');
      if (wrong !== undefined) throw new MalformedMetadataError(path, idx + 1, name, wrong);
    }
    assignField(result, name, parsed.value, idx + 1);
  }
  return result;
};
