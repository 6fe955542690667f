#!/usr/bin/env node
// Signs every item of the system bundles (the .ai/ of ryeos, @ryeos/threads and @ryeos/executor)
// with the bundle key in keys/bundle, using the signature formats the executor bundle's extractor
// YAMLs declare, writes the key's trust-store entry into each bundle, and makes and signs each
// bundle's index (.ai/bundle.index: what each item parses to, so a cold search or execute loads
// no parser for system items).
// Run after `pnpm build`: node scripts/sign-bundle.mjs [--check]
// With --check it signs nothing and exits 1 if any item or the index would change (CI-friendly).
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { ITEM_READERS } from '../packages/directives/dist/index.js';
import {
  BUNDLE_INDEX_SIGNATURE,
  bundleIndexPath,
  bundleIndexText,
  trustFileText,
} from '../packages/executor/dist/index.js';
import { fingerprint, signableContent, signContent, verifyContent } from '../packages/lillux/dist/index.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
// Each layer's bundle: the items it resolves by fixed id ship with it.
const bundles = ['ryeos', 'threads', 'executor'].map((name) => join(repo, 'packages', name, '.ai'));
const executorRoot = join(repo, 'packages', 'executor');
const extractors = join(executorRoot, '.ai', 'tools', 'rye', 'core', 'extractors');
const keyDir = join(repo, 'keys', 'bundle');
const keyPair = {
  privateKeyPem: readFileSync(join(keyDir, 'private_key.pem'), 'utf8'),
  publicKeyPem: readFileSync(join(keyDir, 'public_key.pem'), 'utf8'),
};
const fp = fingerprint(keyPair.publicKeyPem);
const check = process.argv.includes('--check');

function formatsOf(kind) {
  const path = join(extractors, kind, `${kind}_extractor.yaml`);
  const data = parse(readFileSync(path, 'utf8'));
  const extensions = data.extensions ?? [];
  const raw = data.signature_format
    ? Object.fromEntries(extensions.map((ext) => [ext, data.signature_format]))
    : data.signature_formats;
  return {
    legacyRecipe: data.legacy_recipe ?? 'tool',
    formats: Object.fromEntries(
      Object.entries(raw).map(([ext, f]) => [
        ext,
        {
          prefix: f.prefix,
          ...(f.suffix ? { suffix: f.suffix } : {}),
          afterShebang: f.after_shebang === true,
        },
      ]),
    ),
  };
}

function* files(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.isFile()) yield path;
  }
}

const kinds = { tool: 'tools', directive: 'directives', knowledge: 'knowledge', config: 'config' };
const formatsByKind = Object.fromEntries(Object.keys(kinds).map((kind) => [kind, formatsOf(kind)]));
let failed = false;

/** Signs (or checks) one bundle's items, trust entry and index. */
function signBundle(bundle) {
  let changed = 0;
  let total = 0;
  for (const [kind, dir] of Object.entries(kinds)) {
    const { formats, legacyRecipe } = formatsByKind[kind];
    for (const path of files(join(bundle, dir))) {
      if (kind === 'config' && path.includes(`${join('config', 'keys')}`)) continue;
      // package.json marks a node tool folder (anchor + verify_deps); it is data, not an item.
      if (basename(path) === 'package.json') continue;
      const format = formats[extname(path)];
      if (!format) continue; // data files next to tools (e.g. README) are not items
      total += 1;
      const text = readFileSync(path, 'utf8');
      const result = verifyContent(text, {
        format,
        legacyRecipe,
        resolveKey: (f) => (f === fp ? keyPair : undefined),
      });
      if (result.status === 'ok' && result.recipe === 'full') continue;
      changed += 1;
      if (check) console.error(`needs signing (${result.status}): ${relative(repo, path)}`);
      else writeFileSync(path, signContent(text, { format, keyPair }));
    }
  }
  const trustPath = join(bundle, 'config', 'keys', 'trusted', `${fp}.toml`);
  if (!check) {
    mkdirSync(dirname(trustPath), { recursive: true });
    writeFileSync(trustPath, trustFileText(keyPair.publicKeyPem, 'ryeos-bundle'));
  }
  console.error(
    `${relative(repo, bundle)}: ${check ? 'checked' : 'signed'} ${total} items (${changed} ${check ? 'need signing' : 'updated'}); key ${fp}`,
  );

  // The index is made from the items as signed above, so it is made last.
  const indexPath = bundleIndexPath(dirname(bundle));
  const indexText = bundleIndexText(dirname(bundle), { readers: ITEM_READERS, extractorsRoot: executorRoot });
  let shipped;
  try {
    shipped = readFileSync(indexPath, 'utf8');
  } catch {
    shipped = undefined;
  }
  const indexCurrent =
    shipped !== undefined &&
    signableContent(shipped, BUNDLE_INDEX_SIGNATURE) === indexText &&
    (() => {
      const result = verifyContent(shipped, {
        format: BUNDLE_INDEX_SIGNATURE,
        legacyRecipe: 'tool',
        resolveKey: (f) => (f === fp ? keyPair : undefined),
      });
      return result.status === 'ok' && result.recipe === 'full';
    })();
  const indexFiles = indexText.split('\n').length - 3;
  if (indexCurrent) {
    console.error(`bundle index current (${indexFiles} files): ${relative(repo, indexPath)}`);
  } else if (check) {
    console.error(
      `bundle index ${shipped === undefined ? 'missing' : 'stale or not signed'}: ${relative(repo, indexPath)} (run node scripts/sign-bundle.mjs)`,
    );
  } else {
    const temp = `${indexPath}.${process.pid}.tmp`;
    writeFileSync(temp, signContent(indexText, { format: BUNDLE_INDEX_SIGNATURE, keyPair }));
    renameSync(temp, indexPath);
    console.error(`bundle index written (${indexFiles} files): ${relative(repo, indexPath)}`);
  }
  if (changed || !indexCurrent) failed = true;
}

for (const bundle of bundles) signBundle(bundle);
if (check && failed) process.exit(1);
