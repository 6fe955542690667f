/**
 * The `markdown/xml` parser for directives (spec items §2.2): a markdown file with one ```xml
 * fence holding a `<directive>` element; the body (LLM-facing instructions) follows the fence.
 */
import { RyeError } from '@ryeos/lillux';
import { findFence } from './fence.js';
import type { XmlElement } from './xml.js';
import { child, childrenNamed, parseXml, textOf, XmlSyntaxError } from './xml.js';

export interface DirectiveInput {
  name: string;
  type: string;
  required: boolean;
  default?: string;
  description?: string;
}

export type DirectiveOutput = DirectiveInput;

export interface Capability {
  tag: 'cap';
  content: string;
}

export interface HookCondition {
  path: string;
  op: string;
  value: string | number | boolean;
}

export interface DirectiveAction {
  primary: string;
  params: Record<string, string>;
  [attribute: string]: unknown;
}

export interface DirectiveHook {
  id?: string;
  event?: string;
  condition?: HookCondition;
  /** The first action, for hooks with a single `<action primary=…>`. */
  action?: DirectiveAction;
  actions: DirectiveAction[];
  inputs?: Record<string, string>;
  /** Any other attribute (position, wrap, layer, …), coerced. */
  [attribute: string]: unknown;
}

export interface DirectiveContext {
  system: string[];
  before: string[];
  after: string[];
  suppress: string[];
}

export interface ParsedDirective {
  name: string;
  version?: string;
  extends?: string;
  description?: string;
  category?: string;
  author?: string;
  /** Other simple `<metadata>` children, by tag. */
  metadata: Record<string, string>;
  model?: Record<string, string>;
  limits?: Record<string, number | string>;
  permissions: Capability[];
  acknowledged_risks: { risk: string; reason: string }[];
  hooks: DirectiveHook[];
  context?: DirectiveContext;
  continuation_directive?: string;
  inputs: DirectiveInput[];
  outputs: DirectiveOutput[];
  actions: DirectiveAction[];
  templates: Record<string, string[]>;
  raw: string;
  content: string;
  body: string;
  preamble: string;
  warnings: string[];
}

const PERMISSION_TAGS = ['search', 'load', 'execute', 'sign', 'fetch', 'acknowledge'];
const ACTION_TAGS = new Set(['execute', 'search', 'load', 'sign']);
const CUT_TAGS = /<(template|example|raw)(\s[^>]*)?>([\s\S]*?)<\/\1\s*>/g;

export class DirectiveParseError extends RyeError {
  constructor(path: string, line: number, element: string, expected: string) {
    super('VALIDATION', `Invalid directive ${path}:${line}: <${element}>: ${expected}`, {
      hint: 'Fix the directive, then sign it again.',
      details: { path, line, element },
    });
  }
}

/** Limit values: `1.5` → float, `8` → int, anything else stays a string. */
function limitValue(value: string): number | string {
  if (/^-?\d+\.\d*$|^-?\d*\.\d+$/.test(value)) return Number.parseFloat(value);
  if (/^-?\d+$/.test(value)) return Number.parseInt(value, 10);
  return value;
}

function coerce(value: string): string | number | boolean {
  if (/^true$/i.test(value)) return true;
  if (/^false$/i.test(value)) return false;
  if (/^-?\d+$/.test(value)) return Number.parseInt(value, 10);
  if (/^-?\d*\.\d+$/.test(value)) return Number.parseFloat(value);
  return value;
}

function bool(value: string | undefined): boolean {
  return value === 'true' || value === 'True' || value === '1' || value === 'yes';
}

class DirectiveBuilder {
  constructor(
    private readonly path: string,
    private readonly lineOffset: number,
  ) {}

  fail(element: XmlElement, expected: string): never {
    throw new DirectiveParseError(this.path, element.line + this.lineOffset, element.name, expected);
  }

  field(
    element: XmlElement,
    name: string,
  ): { name: string; type: string; required: boolean; default?: string; description?: string } {
    const fieldName = element.attributes.name;
    if (!fieldName) this.fail(element, `expected a name attribute, e.g. <${element.name} name="topic">`);
    const out: DirectiveInput = {
      name: fieldName,
      type: element.attributes.type || 'string',
      required: bool(element.attributes.required),
    };
    if (element.attributes.default !== undefined) out.default = element.attributes.default;
    const description = textOf(element);
    if (description) out.description = description;
    if (element.children.length)
      this.fail(element.children[0]!, `unexpected element inside <${name}>: it holds a description only`);
    return out;
  }

  /** An element named after its field (`<result>text</result>`): optional, typed by `type`. */
  namedField(element: XmlElement, parent: string): DirectiveOutput {
    if (element.children.length)
      this.fail(
        element.children[0]!,
        `unexpected element inside <${element.name}> in <${parent}>: it holds a description only`,
      );
    const out: DirectiveOutput = {
      name: element.name,
      type: element.attributes.type || 'string',
      required: bool(element.attributes.required),
    };
    const description = textOf(element);
    if (description) out.description = description;
    return out;
  }

  /** `<execute>`, `<search>`… inside `<permissions>` → capability strings. */
  permissions(element: XmlElement, directive: ParsedDirective): void {
    if (element.text.trim() === '*') directive.permissions.push({ tag: 'cap', content: 'rye.*' });
    for (const grant of element.children) {
      if (!PERMISSION_TAGS.includes(grant.name)) {
        this.fail(grant, `unknown tag inside <permissions>. Valid tags: ${PERMISSION_TAGS.join(', ')}`);
      }
      if (grant.name === 'acknowledge') {
        directive.acknowledged_risks.push({
          risk: grant.attributes.risk ?? 'unspecified',
          reason: textOf(grant),
        });
        continue;
      }
      const own = textOf(grant);
      if (own) directive.permissions.push({ tag: 'cap', content: `rye.${grant.name}.${own}` });
      for (const scoped of grant.children) {
        const target = textOf(scoped);
        if (!target)
          this.fail(
            scoped,
            `expected a capability pattern, e.g. <${scoped.name}>rye.file-system.*</${scoped.name}>`,
          );
        directive.permissions.push({ tag: 'cap', content: `rye.${grant.name}.${scoped.name}.${target}` });
      }
      if (!own && grant.children.length === 0)
        this.fail(grant, `expected '*' or a capability pattern inside <${grant.name}>`);
    }
  }

  /** One action element; nested primary elements are returned after it, in document order. */
  actions(element: XmlElement, primary = element.name): DirectiveAction[] {
    const params: Record<string, string> = {};
    const nested: DirectiveAction[] = [];
    for (const c of element.children) {
      if (c.name === 'param') {
        const name = c.attributes.name;
        if (!name) this.fail(c, 'expected a name attribute on <param>');
        params[name] = c.attributes.value ?? textOf(c);
      } else if (ACTION_TAGS.has(c.name)) nested.push(...this.actions(c));
    }
    const { primary: _primary, ...attributes } = element.attributes;
    return [{ primary, ...attributes, params }, ...nested];
  }

  hook(element: XmlElement): DirectiveHook {
    const hook: DirectiveHook = { actions: [] };
    for (const [name, value] of Object.entries(element.attributes)) {
      hook[name] = name === 'id' || name === 'event' ? value : coerce(value);
    }
    for (const c of element.children) {
      if (c.name === 'condition') {
        const { path, op, value } = c.attributes;
        if (!path || !op)
          this.fail(
            c,
            'expected path and op attributes, e.g. <condition path="cost.turns" op="gte" value="5"/>',
          );
        hook.condition = { path, op, value: coerce(value ?? '') };
      } else if (c.name === 'action') {
        const wrapsOnly =
          c.attributes.primary === undefined &&
          c.children.length > 0 &&
          c.children.every((x) => ACTION_TAGS.has(x.name));
        if (wrapsOnly) {
          for (const inner of c.children) hook.actions.push(...this.actions(inner));
        } else {
          const [action, ...nested] = this.actions(c, c.attributes.primary ?? 'execute');
          hook.action ??= action;
          hook.actions.push(action!, ...nested);
        }
      } else if (c.name === 'inputs') {
        hook.inputs = Object.fromEntries(
          c.children.map((i) => [i.attributes.name ?? i.name, i.attributes.value ?? textOf(i)]),
        );
      }
    }
    return hook;
  }

  context(element: XmlElement, directive: ParsedDirective): DirectiveContext {
    const context: DirectiveContext = { system: [], before: [], after: [], suppress: [] };
    for (const c of element.children) {
      if (Object.hasOwn(context, c.name)) {
        const id = textOf(c);
        if (!id) this.fail(c, 'expected a knowledge id');
        context[c.name as keyof DirectiveContext].push(id);
      } else
        directive.warnings.push(
          `Ignored <${c.name}> inside <context> (expected system, before, after or suppress)`,
        );
    }
    return context;
  }

  metadata(element: XmlElement, directive: ParsedDirective): void {
    for (const c of element.children) {
      switch (c.name) {
        case 'description':
          directive.description = textOf(c);
          break;
        case 'category':
          directive.category = textOf(c);
          break;
        case 'author':
          directive.author = textOf(c);
          break;
        case 'model':
        case 'model_class':
          directive.model = { ...c.attributes };
          break;
        case 'limits':
          directive.limits = Object.fromEntries(
            Object.entries(c.attributes).map(([k, v]) => [k, limitValue(v)]),
          );
          break;
        case 'permissions':
          this.permissions(c, directive);
          break;
        case 'hooks':
          directive.hooks = c.children.filter((h) => h.name === 'hook').map((h) => this.hook(h));
          break;
        case 'context':
          directive.context = this.context(c, directive);
          break;
        case 'continuation_directive':
          directive.continuation_directive = textOf(c);
          break;
        default:
          if (c.children.length === 0) directive.metadata[c.name] = textOf(c);
          else directive.warnings.push(`Ignored <${c.name}> inside <metadata>: it has child elements`);
      }
    }
  }

  /** Actions anywhere outside `<metadata>` (and outside inputs/outputs). */
  collectActions(element: XmlElement, into: DirectiveAction[]): void {
    for (const c of element.children) {
      if (c.name === 'metadata' || c.name === 'inputs' || c.name === 'outputs') continue;
      if (ACTION_TAGS.has(c.name)) into.push(...this.actions(c));
      else this.collectActions(c, into);
    }
  }
}

/** Parses a directive file's text. `path` is used in error messages only. */
export function parseDirective(text: string, path: string): ParsedDirective {
  const fence = findFence(text, 'xml');
  if (!fence) {
    throw new RyeError('VALIDATION', `Invalid directive ${path}: No XML code block found`, {
      hint: 'A directive needs a ```xml fence holding its <directive> element, followed by its instructions.',
      details: { path },
    });
  }
  const templates: Record<string, string[]> = {};
  // Free-form examples and templates are cut out (their lines kept) before strict parsing.
  const xml = fence.content.replace(CUT_TAGS, (_m, tag: string, attrs: string | undefined, inner: string) => {
    templates[tag] = [...(templates[tag] ?? []), inner];
    return `<${tag}${attrs ?? ''}>${'\n'.repeat(inner.split('\n').length - 1)}</${tag}>`;
  });
  const builder: DirectiveBuilder = new DirectiveBuilder(path, fence.contentLine - 1);
  let root: XmlElement;
  try {
    root = parseXml(xml);
  } catch (error) {
    if (error instanceof XmlSyntaxError) {
      throw new RyeError(
        'VALIDATION',
        `Invalid directive ${path}:${error.line + fence.contentLine - 1}: Invalid XML: ${error.message}`,
        {
          hint: 'Check that every element is closed and attribute values are quoted.',
          details: { path, line: error.line + fence.contentLine - 1 },
        },
      );
    }
    throw error;
  }
  if (root.name !== 'directive') builder.fail(root, 'expected the root element to be <directive>');
  const name = root.attributes.name;
  if (!name)
    builder.fail(root, 'expected a name attribute, e.g. <directive name="summarize" version="1.0.0">');
  const directive: ParsedDirective = {
    name,
    metadata: {},
    permissions: [],
    acknowledged_risks: [],
    hooks: [],
    inputs: [],
    outputs: [],
    actions: [],
    templates,
    raw: text,
    content: fence.content,
    body: fence.body,
    preamble: fence.preamble,
    warnings: [],
  };
  if (root.attributes.version) directive.version = root.attributes.version;
  if (root.attributes.extends) directive.extends = root.attributes.extends;
  const description = child(root, 'description');
  if (description) directive.description = textOf(description);
  const metadata = child(root, 'metadata');
  if (metadata) builder.metadata(metadata, directive);
  for (const inputs of childrenNamed(root, 'inputs')) {
    for (const input of inputs.children) {
      if (input.name !== 'input') builder.fail(input, 'expected <input name="…"> elements inside <inputs>');
      directive.inputs.push(builder.field(input, 'input'));
    }
  }
  for (const outputs of childrenNamed(root, 'outputs')) {
    for (const output of outputs.children) {
      // The original's bundles also name outputs by element (`<outputs><result>…</result>
      // <child_thread_id/></outputs>`): each is an optional output, its text the description.
      if (output.name !== 'output') {
        directive.outputs.push(builder.namedField(output, 'outputs'));
        continue;
      }
      directive.outputs.push(builder.field(output, 'output'));
    }
  }
  builder.collectActions(root, directive.actions);
  return directive;
}
