/**
 * Per-kind file knowledge, read from the extractor YAMLs (spec items §3):
 * `.ai/tools/rye/core/extractors/<kind>/<kind>_extractor.yaml`, searched project → user → system,
 * first definition per extension wins. Extractor files verify like tools before they are used.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { LegacyRecipe, SignatureFormat } from '@ryeos/lillux';
import { RyeError } from '@ryeos/lillux';
import { ContentCache } from './content-cache.js';
import { readItemText } from './item-text.js';
import { EXECUTOR_BUNDLE_ID } from './layer-bundle.js';
import { observedOnce } from './observations.js';
import { parseYamlDocument } from './parsers/yaml.js';
import type { SignableKind } from './refs.js';
import type { Space, Spaces } from './spaces.js';
import type { TrustStore } from './trust.js';
import type { IntegrityPolicy, ItemVerification } from './verify.js';
import { verifyItem } from './verify.js';

export interface KindConfig {
  kind: SignableKind;
  /** Resolution order of extensions (with dots). */
  extensions: string[];
  /** Extension → parser name (`python/ast`, `yaml/yaml`, …). */
  parsers: Record<string, string>;
  signatureFormats: Record<string, SignatureFormat>;
  legacyRecipe: LegacyRecipe;
  validationSchema?: Record<string, unknown>;
  searchFields?: Record<string, number>;
  /** Extractor files that contributed, highest space first. */
  sources: { path: string; space: string; verification: ItemVerification }[];
}

/** Extractors are YAML tools; this is how their own signature line looks. */
const EXTRACTOR_FORMAT: SignatureFormat = { prefix: '#', afterShebang: false };

export function extractorId(kind: SignableKind): string {
  return `rye/core/extractors/${kind}/${kind}_extractor`;
}

interface RawFormat {
  prefix?: unknown;
  suffix?: unknown;
  after_shebang?: unknown;
}

function toFormat(raw: RawFormat, path: string): SignatureFormat {
  if (typeof raw?.prefix !== 'string') {
    throw new RyeError('VALIDATION', `Malformed extractor ${path}: signature format needs a string 'prefix'`);
  }
  const format: SignatureFormat = { prefix: raw.prefix, afterShebang: raw.after_shebang === true };
  if (typeof raw.suffix === 'string' && raw.suffix) format.suffix = raw.suffix;
  return format;
}

function asExtensions(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Merges one extractor file's data into the config; earlier (higher) spaces win per extension. */
export function mergeExtractor(config: KindConfig, data: Record<string, unknown>, path: string): void {
  const extensions = asExtensions(data.extensions);
  for (const ext of extensions) if (!config.extensions.includes(ext)) config.extensions.push(ext);
  const parsers: Record<string, unknown> =
    typeof data.parser === 'string'
      ? Object.fromEntries(extensions.map((ext) => [ext, data.parser]))
      : ((data.parsers as Record<string, unknown>) ?? {});
  for (const [ext, parser] of Object.entries(parsers)) {
    if (typeof parser === 'string') config.parsers[ext] ??= parser;
  }
  const formats: Record<string, unknown> = data.signature_format
    ? Object.fromEntries(extensions.map((ext) => [ext, data.signature_format]))
    : ((data.signature_formats as Record<string, unknown>) ?? {});
  for (const [ext, format] of Object.entries(formats)) {
    config.signatureFormats[ext] ??= toFormat(format as RawFormat, path);
  }
  if (typeof data.legacy_recipe === 'string') config.legacyRecipe = data.legacy_recipe as LegacyRecipe;
  if (!config.validationSchema && data.validation_schema && typeof data.validation_schema === 'object') {
    config.validationSchema = data.validation_schema as Record<string, unknown>;
  }
  if (!config.searchFields && data.search_fields && typeof data.search_fields === 'object') {
    config.searchFields = data.search_fields as Record<string, number>;
  }
}

export const DEFAULT_LEGACY: Record<SignableKind, LegacyRecipe> = {
  tool: 'tool',
  config: 'tool',
  directive: 'directive',
  knowledge: 'knowledge',
};

interface CacheEntry {
  stamp: string;
  config: KindConfig;
}

/** Loads and caches kind configs for one set of spaces; a changed extractor file is re-read. */
export class KindRegistry {
  private readonly configs = new Map<SignableKind, CacheEntry>();

  constructor(
    private readonly spaces: Spaces,
    private readonly trust: TrustStore,
    private readonly integrity: IntegrityPolicy,
    private readonly cache: ContentCache = new ContentCache(),
  ) {}

  private candidates(kind: SignableKind): { space: Space; path: string }[] {
    const relative = `${extractorId(kind)}.yaml`;
    return this.spaces
      .ordered()
      .map((space) => ({ space, path: join(space.base, '.ai', 'tools', relative) }));
  }

  /** Extractor files' stats plus the trust store's: a revoked key must stop vouching for them. */
  private stampOf(kind: SignableKind): string {
    return observedOnce(`kind-stamp:${kind}`, () => this.readStamp(kind));
  }

  private readStamp(kind: SignableKind): string {
    return `${this.trust.stamp()}#${this.candidates(kind)
      .map(({ path }) => {
        const info = statSync(path, { throwIfNoEntry: false });
        return info ? `${path}:${info.size}:${info.mtimeMs}:${info.ctimeMs}` : '';
      })
      .join('|')}`;
  }

  /** The last loaded config of a kind, without re-checking the extractor files. */
  peek(kind: SignableKind): KindConfig | undefined {
    return this.configs.get(kind)?.config;
  }

  async get(kind: SignableKind): Promise<KindConfig> {
    const stamp = this.stampOf(kind);
    const cached = this.configs.get(kind);
    if (cached?.stamp === stamp) return cached.config;
    const config = emptyKindConfig(kind);
    for (const { space, path } of this.candidates(kind)) {
      let text: string;
      try {
        text = readItemText(path);
      } catch {
        continue;
      }
      const id = extractorId(kind);
      const data = this.cache.derive('extractor', path, text, () => parseYamlDocument(text, path));
      const verification = verifyItem(
        {
          path,
          kind: 'tool',
          id,
          space,
          text,
          format: EXTRACTOR_FORMAT,
          legacyRecipe: 'tool',
          declared: { category: typeof data.category === 'string' ? data.category : undefined },
        },
        this.trust,
        this.integrity,
      );
      mergeExtractor(config, data, path);
      config.sources.push({ path, space: space.label, verification });
    }
    if (config.extensions.length === 0) {
      throw new RyeError('CONFIG', `No extractor found for kind '${kind}'`, {
        hint: `The @ryeos/executor package ships .ai/tools/${extractorId(kind)}.yaml in its bundle: build the Executor without systemBundles, or include executorBundle() in them.`,
        details: { item_id: extractorId(kind), bundle: EXECUTOR_BUNDLE_ID, package: '@ryeos/executor' },
      });
    }
    this.configs.set(kind, { stamp, config });
    return config;
  }
}

/** A kind's config before any extractor is merged into it. */
export function emptyKindConfig(kind: SignableKind): KindConfig {
  return {
    kind,
    extensions: [],
    parsers: {},
    signatureFormats: {},
    legacyRecipe: DEFAULT_LEGACY[kind],
    sources: [],
  };
}

/** The signature format for a file, or a clear error when its extension has none. */
export function formatFor(config: KindConfig, extension: string): SignatureFormat {
  const format = config.signatureFormats[extension];
  if (!format) {
    throw new RyeError(
      'CONFIG',
      `No signature format configured for extension '${extension}' (kind ${config.kind})`,
      {
        hint: `Add it to signature_formats in ${extractorId(config.kind)}.yaml.`,
      },
    );
  }
  return format;
}
