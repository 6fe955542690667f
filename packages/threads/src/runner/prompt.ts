/**
 * The first message of a fresh thread (spec threads §7.1): context before, the directive prompt,
 * context after. The directive prompt carries the name, description, the raw `<permissions>`
 * XML, the interpolated body and, when outputs are declared, the `<returns>` block with the
 * instruction to finish through `rye_directive_return`.
 */
import type { ParsedDirective } from '@ryeos/directives';
import { renderReturns } from '@ryeos/directives';
import { DIRECTIVE_RETURN_NAME } from './palette.js';

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}

function rawPermissions(raw: string): string | undefined {
  return /<permissions\b[\s\S]*?<\/permissions>|<permissions\b[^>]*\/>/.exec(raw)?.[0];
}

export function directivePrompt(directive: ParsedDirective): string {
  const parts = [`<directive name="${escapeAttribute(directive.name)}">`];
  if (directive.description) parts.push(`<description>${directive.description}</description>`);
  const permissions = rawPermissions(directive.raw);
  if (permissions) parts.push(permissions);
  const body = (directive.body || directive.content).trim();
  if (body) parts.push(body);
  if (directive.outputs.length) {
    parts.push(renderReturns(directive.outputs));
    const required = directive.outputs.filter((o) => o.required).map((o) => o.name);
    parts.push(
      [
        `When every step is done, call the ${DIRECTIVE_RETURN_NAME} tool with these outputs as its arguments` +
          (required.length ? ` (required: ${required.join(', ')}).` : '.'),
        `If you cannot complete the directive, call ${DIRECTIVE_RETURN_NAME} with status "error" and error_detail saying why.`,
        'Never write the outputs as text instead of calling the tool.',
      ].join(' '),
    );
  }
  parts.push('</directive>');
  return parts.join('\n\n');
}

/** Blank-line join of the non-empty parts, in order. */
export function joinBlocks(...blocks: (string | undefined)[]): string {
  return blocks
    .map((b) => b?.trim())
    .filter((b): b is string => Boolean(b))
    .join('\n\n');
}
