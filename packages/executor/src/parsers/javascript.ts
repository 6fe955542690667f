/**
 * `javascript/javascript`: reads top-level `const|let|var NAME = <literal>` declarations (also
 * `export const …`, and CommonJS `exports.NAME = …` / `module.exports.NAME = …`) of a
 * JavaScript or TypeScript tool with `@babel/parser`, without running it. Babel is loaded on first use so that importing the executor stays fast.
 */
import { createRequire } from 'node:module';
import type { parse as babelParse } from '@babel/parser';
import {
  assignField,
  checkFieldType,
  isKnownMetadataField,
  MalformedMetadataError,
  type MetadataParser,
  type ParsedMetadata,
  setOwn,
} from './types.js';

type BabelFile = ReturnType<typeof babelParse>;
type Statement = BabelFile['program']['body'][number];
type VariableDeclaration = Extract<Statement, { type: 'VariableDeclaration' }>;
type Expression = NonNullable<VariableDeclaration['declarations'][number]['init']>;

interface BabelModule {
  parse: typeof babelParse;
}

let babel: BabelModule | undefined;

function loadBabel(): BabelModule {
  babel ??= createRequire(import.meta.url)('@babel/parser') as BabelModule;
  return babel;
}

const EXPECTED_LITERAL = 'expected a literal value (string, number, boolean, null, array, object)';

/** A value that is not a plain literal; `what` names it for the error message. */
class NotLiteral {
  readonly what: string;
  constructor(what: string) {
    this.what = what;
  }
}

function describeNode(node: { type: string }): string {
  switch (node.type) {
    case 'CallExpression':
    case 'OptionalCallExpression':
      return 'a function call';
    case 'NewExpression':
      return 'a constructor call';
    case 'MemberExpression':
    case 'OptionalMemberExpression':
      return 'a property access';
    case 'TemplateLiteral':
      return 'a template literal with expressions';
    case 'TaggedTemplateExpression':
      return 'a tagged template';
    case 'BinaryExpression':
      return 'a binary expression';
    case 'LogicalExpression':
      return 'a logical expression';
    case 'ConditionalExpression':
      return 'a conditional expression';
    case 'ArrowFunctionExpression':
    case 'FunctionExpression':
      return 'a function';
    case 'ClassExpression':
      return 'a class';
    case 'RegExpLiteral':
      return 'a regular expression';
    case 'BigIntLiteral':
      return 'a bigint';
    case 'UnaryExpression':
      return 'a unary expression';
    case 'AwaitExpression':
      return 'an await expression';
    case 'AssignmentExpression':
      return 'an assignment';
    case 'SequenceExpression':
      return 'a comma expression';
    case 'SpreadElement':
      return 'a spread';
    case 'ObjectMethod':
      return 'a method';
    default:
      return `a ${node.type}`;
  }
}

/** Strips `as const`, `satisfies T`, `<T>x`, `x!` and parentheses. */
function unwrap(node: Expression): Expression {
  let n = node;
  for (;;) {
    switch (n.type) {
      case 'TSAsExpression':
      case 'TSSatisfiesExpression':
      case 'TSTypeAssertion':
      case 'TSNonNullExpression':
      case 'ParenthesizedExpression':
        n = n.expression;
        break;
      default:
        return n;
    }
  }
}

const MAX_DEPTH = 500;

/** Evaluates a literal expression; throws `NotLiteral`. */
function literal(node: Expression, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new NotLiteral('a value nested too deeply');
  const n = unwrap(node);
  switch (n.type) {
    case 'StringLiteral':
    case 'NumericLiteral':
    case 'BooleanLiteral':
      return n.value;
    case 'NullLiteral':
      return null;
    case 'TemplateLiteral': {
      const quasi = n.quasis[0];
      if (n.expressions.length > 0 || quasi === undefined) throw new NotLiteral(describeNode(n));
      return quasi.value.cooked ?? quasi.value.raw;
    }
    case 'UnaryExpression': {
      const arg = unwrap(n.argument);
      if ((n.operator === '-' || n.operator === '+') && arg.type === 'NumericLiteral') {
        return n.operator === '-' ? -arg.value : arg.value;
      }
      throw new NotLiteral(describeNode(n));
    }
    case 'ArrayExpression':
      return n.elements.map((el) => {
        if (el === null) throw new NotLiteral('an array with holes');
        if (el.type === 'SpreadElement') throw new NotLiteral(describeNode(el));
        return literal(el, depth + 1);
      });
    case 'ObjectExpression': {
      const obj: Record<string, unknown> = {};
      for (const prop of n.properties) {
        if (prop.type !== 'ObjectProperty') throw new NotLiteral(describeNode(prop));
        if (prop.computed) throw new NotLiteral('a computed key');
        const key = prop.key;
        let name: string;
        if (key.type === 'Identifier') name = key.name;
        else if (key.type === 'StringLiteral') name = key.value;
        else if (key.type === 'NumericLiteral') name = String(key.value);
        else throw new NotLiteral(`a ${key.type} key`);
        if (prop.value.type === 'Identifier' && prop.shorthand)
          throw new NotLiteral(`a shorthand property (\`${name}\`)`);
        setOwn(obj, name, literal(prop.value as Expression, depth + 1));
      }
      return obj;
    }
    case 'Identifier':
      throw new NotLiteral(`a name (\`${n.name}\`)`);
    default:
      throw new NotLiteral(describeNode(n));
  }
}

function pluginsFor(path: string): ('typescript' | 'jsx')[] {
  const lower = path.toLowerCase();
  if (lower.endsWith('.tsx')) return ['typescript', 'jsx'];
  if (lower.endsWith('.ts') || lower.endsWith('.mts') || lower.endsWith('.cts')) return ['typescript'];
  return [];
}

function parseFile(text: string, path: string): BabelFile {
  try {
    return loadBabel().parse(text, {
      sourceType: 'unambiguous',
      plugins: pluginsFor(path),
      errorRecovery: false,
      allowReturnOutsideFunction: true,
      allowAwaitOutsideFunction: true,
    });
  } catch (e) {
    const err = e as { message?: unknown; loc?: { line?: unknown } };
    const line = typeof err.loc?.line === 'number' ? err.loc.line : 1;
    const message = String(err.message ?? e).replace(/ \(\d+:\d+\)$/, '');
    throw new MalformedMetadataError(path, line, '(file)', `valid JavaScript/TypeScript: ${message}`);
  }
}

/** A top-level `NAME = <expression>` the parser reads, wherever its form came from. */
interface Binding {
  name: string;
  init: Expression;
  line: number;
  /** Set by a CommonJS `exports.NAME = …` assignment rather than a declaration. */
  commonJs?: boolean;
}

/** `exports.NAME` or `module.exports.NAME` (dotted or with a string key): the name, else undefined. */
function commonJsExportName(target: { type: string }): string | undefined {
  if (target.type !== 'MemberExpression') return undefined;
  const member = target as Extract<Expression, { type: 'MemberExpression' }>;
  const object = member.object;
  const isExports =
    (object.type === 'Identifier' && object.name === 'exports') ||
    (object.type === 'MemberExpression' &&
      !object.computed &&
      object.object.type === 'Identifier' &&
      object.object.name === 'module' &&
      object.property.type === 'Identifier' &&
      object.property.name === 'exports');
  if (!isExports) return undefined;
  const key = member.property;
  if (!member.computed && key.type === 'Identifier') return key.name;
  if (member.computed && key.type === 'StringLiteral') return key.value;
  return undefined;
}

/**
 * The bindings one top-level statement makes: `const|let|var` declarations (exported or not) and
 * CommonJS `exports.NAME = …` assignments, so a CommonJS tool is read like an ES module one.
 */
function bindingsOf(stmt: Statement): Binding[] {
  const line = stmt.loc?.start.line ?? 1;
  if (stmt.type === 'ExpressionStatement' && stmt.expression.type === 'AssignmentExpression') {
    const assignment = stmt.expression;
    const name = assignment.operator === '=' ? commonJsExportName(assignment.left) : undefined;
    return name === undefined ? [] : [{ name, init: assignment.right, line, commonJs: true }];
  }
  const decl =
    stmt.type === 'VariableDeclaration'
      ? stmt
      : stmt.type === 'ExportNamedDeclaration' && stmt.declaration?.type === 'VariableDeclaration'
        ? stmt.declaration
        : undefined;
  if (decl === undefined) return [];
  const bindings: Binding[] = [];
  for (const d of decl.declarations) {
    if (d.id.type !== 'Identifier' || d.init == null) continue;
    bindings.push({ name: d.id.name, init: d.init, line: d.loc?.start.line ?? line });
  }
  return bindings;
}

/** Only `.cjs`/`.cts` files run as CommonJS: every other JavaScript tool runs as an ES module. */
function runsAsCommonJs(path: string): boolean {
  return /\.c[jt]s$/i.test(path);
}

/**
 * Tool metadata set with `exports.NAME = …` in a file that runs as an ES module: `exports` is
 * not defined there, so the tool would fail on its first line even though its metadata reads.
 */
function commonJsInModule(path: string, binding: Binding): MalformedMetadataError {
  return new MalformedMetadataError(
    path,
    binding.line,
    binding.name,
    `set with CommonJS \`exports.${binding.name} = …\`, but this file runs as an ES module, where \`exports\` is not defined`,
    `Write \`export const ${binding.name} = …\` instead, or rename the file to .cjs; then sign the tool again.`,
  );
}

export const parseJavaScriptMetadata: MetadataParser = (text, path) => {
  const file = parseFile(text, path);
  const result: ParsedMetadata = { fields: {}, lines: {} };
  for (const stmt of file.program.body) {
    for (const binding of bindingsOf(stmt)) {
      const { name, init, line } = binding;
      const known = isKnownMetadataField(name);
      if (known && binding.commonJs && !runsAsCommonJs(path)) throw commonJsInModule(path, binding);
      let value: unknown;
      try {
        value = literal(init);
      } catch (e) {
        if (!(e instanceof NotLiteral)) throw e;
        if (known) throw new MalformedMetadataError(path, line, name, `${EXPECTED_LITERAL}, got ${e.what}`);
        continue;
      }
      if (known) {
        const wrong = checkFieldType(name, value, 'javascript');
        if (wrong !== undefined) throw new MalformedMetadataError(path, line, name, wrong);
      }
      assignField(result, name, value, line);
    }
  }
  return result;
};
