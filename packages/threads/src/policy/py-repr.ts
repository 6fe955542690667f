/**
 * Python's `repr` of strings and string lists: the reference prints capability lists this way in
 * its messages (`['rye.execute.tool.rye.core.*']`), and the messages are part of the contract.
 */
export function pyRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\' || ch === quote) out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

export function pyList(items: readonly string[]): string {
  return `[${items.map(pyRepr).join(', ')}]`;
}
