/**
 * A system bundle's index records the whole document of each YAML config file and YAML tool, so a
 * higher layer (a thread's agent config, its providers) reads a bundle file's data without loading
 * the YAML parser; only for exactly the bytes it was made for, and only from a signed index.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { signContent } from '@ryeos/lillux';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  BUNDLE_INDEX_SIGNATURE,
  bundleIndexPath,
  bundleIndexText,
  YAML_DOCUMENT_NAMESPACE,
} from '../src/index.js';
import { useWorkspaces } from './security/helpers.js';

const workspace = useWorkspaces();

const CONFIG = `# The agent defaults
limits:
  defaults:
    turns: 7
    spend: 0.5
retries: [1, 2, 4]
`;
const PROVIDER = `tool_id: acme
tool_type: provider
category: rye/agent/providers
config:
  url: http://127.0.0.1:9/v1/messages
`;

describe('the YAML documents of a bundle index', () => {
  it('holds each config file and YAML tool as parsed, skipping trust-store keys and empty documents', async () => {
    const ws = await workspace();
    await ws.write('system', 'config/agent/resilience.yaml', CONFIG);
    await ws.write('system', 'config/agent/empty.yaml', '# nothing yet\n');
    await ws.write('system', 'config/keys/trusted/extra.yaml', 'owner: someone\n');
    await ws.write('system', 'tools/rye/agent/providers/acme.yaml', PROVIDER);
    const files = JSON.parse(bundleIndexText(ws.system)).files as Record<
      string,
      { values: Record<string, unknown> }
    >;
    expect(files['config/agent/resilience.yaml']?.values[YAML_DOCUMENT_NAMESPACE]).toEqual(parse(CONFIG));
    expect(files['tools/rye/agent/providers/acme.yaml']?.values[YAML_DOCUMENT_NAMESPACE]).toEqual(
      parse(PROVIDER),
    );
    expect(files['config/agent/empty.yaml']).toBeUndefined();
    expect(files['config/keys/trusted/extra.yaml']).toBeUndefined();
  });

  it('answers through the executor cache for the signed bytes only: an edited file is not answered', async () => {
    const ws = await workspace();
    await ws.write('system', 'config/agent/resilience.yaml', CONFIG);
    const index = bundleIndexText(ws.system);
    await writeFile(
      bundleIndexPath(ws.system),
      signContent(index, { format: BUNDLE_INDEX_SIGNATURE, keyPair: ws.bundleKey }),
    );
    const path = join(ws.system, '.ai', 'config', 'agent', 'resilience.yaml');
    const executor = await ws.executor();
    const text = await readFile(path, 'utf8');
    expect(executor.cache.precomputed(YAML_DOCUMENT_NAMESPACE, path, text)).toEqual(parse(CONFIG));
    expect(executor.cache.precomputed(YAML_DOCUMENT_NAMESPACE, path, `${text}extra: 1\n`)).toBeUndefined();
  });
});
