/**
 * Finds the metadata fence of a markdown item (spec items §2.2): the first line that is exactly
 * ```` ```<lang> ```` (trailing spaces allowed) outside an outer fence of four or more backticks,
 * up to the next line that is exactly ```` ``` ````.
 */
export interface FenceMatch {
  /** Text before the fence, trimmed. */
  preamble: string;
  /** Text inside the fence, trimmed. */
  content: string;
  /** Text after the closing fence, trimmed. */
  body: string;
  /** 1-based line of the opening fence in the file. */
  line: number;
  /** 1-based file line where the trimmed content starts. */
  contentLine: number;
}

export function findFence(text: string, lang: string): FenceMatch | undefined {
  const lines = text.split('\n');
  const opener = new RegExp(`^\`\`\`${lang}\\s*$`);
  let outer = 0; // backtick count of the open outer fence, 0 when none
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const ticks = /^(`{4,})/.exec(line)?.[1]?.length ?? 0;
    if (outer) {
      if (ticks >= outer && /^`+\s*$/.test(line)) outer = 0;
      continue;
    }
    if (ticks >= 4) {
      outer = ticks;
      continue;
    }
    if (!opener.test(line)) continue;
    for (let j = i + 1; j < lines.length; j++) {
      if (lines[j] === '```') {
        let first = i + 1;
        while (first < j && lines[first]!.trim() === '') first++;
        return {
          contentLine: first + 1,
          preamble: lines.slice(0, i).join('\n').trim(),
          content: lines
            .slice(i + 1, j)
            .join('\n')
            .trim(),
          body: lines
            .slice(j + 1)
            .join('\n')
            .trim(),
          line: i + 1,
        };
      }
    }
    return undefined;
  }
  return undefined;
}
