/**
 * Renders a directive's declared outputs as the `<returns>` block that follows the process steps
 * in a threaded prompt (seed 000). The LLM never sees the raw `<outputs>` element.
 */
export interface DeclaredOutput {
  name: string;
  type?: string;
  required?: boolean;
  description?: string;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** One `<output>` per declared output; self-closing when it has no description. */
export function renderReturns(outputs: readonly DeclaredOutput[] | Record<string, string>): string {
  const list: DeclaredOutput[] = Array.isArray(outputs)
    ? outputs
    : Object.entries(outputs).map(([name, description]) => ({ name, description }));
  if (list.length === 0) return '';
  const lines = list.map((output) => {
    const name = escapeXml(output.name);
    const description = output.description?.trim();
    return description
      ? `  <output name="${name}">${escapeXml(description)}</output>`
      : `  <output name="${name}" />`;
  });
  return `<returns>\n${lines.join('\n')}\n</returns>`;
}
