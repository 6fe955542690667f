/**
 * A small element tree over saxes (a strict, well-kept SAX parser): each element keeps its
 * attributes, text, children and the line it starts on, so errors can name where they are.
 */
import { createRequire } from 'node:module';
import { RyeError } from '@ryeos/lillux';

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** Text directly inside this element (children's text excluded), untrimmed. */
  text: string;
  /** 1-based line within the parsed XML text. */
  line: number;
}

interface SaxesModule {
  SaxesParser: new (options?: Record<string, unknown>) => SaxesParserLike;
}
interface SaxesParserLike {
  line: number;
  on(event: 'opentag', handler: (tag: { name: string; attributes: Record<string, string> }) => void): void;
  on(event: 'closetag' | 'text' | 'cdata', handler: (value: unknown) => void): void;
  on(event: 'error', handler: (error: Error) => void): void;
  write(chunk: string): SaxesParserLike;
  close(): SaxesParserLike;
}

let saxes: SaxesModule | undefined;

export class XmlSyntaxError extends RyeError {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super('VALIDATION', message, { details: { line } });
  }
}

/** Parses one XML fragment with a single root element. */
export function parseXml(xml: string): XmlElement {
  saxes ??= createRequire(import.meta.url)('saxes') as SaxesModule;
  const parser = new saxes.SaxesParser({ position: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let failure: Error | undefined;
  parser.on('error', (error) => {
    failure ??= error;
  });
  parser.on('opentag', (tag) => {
    const element: XmlElement = {
      name: tag.name,
      attributes: { ...tag.attributes },
      children: [],
      text: '',
      line: parser.line,
    };
    const parent = stack.at(-1);
    if (parent) parent.children.push(element);
    else root ??= element;
    stack.push(element);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  const onText = (value: unknown) => {
    const current = stack.at(-1);
    if (current) current.text += String(value);
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  try {
    parser.write(xml).close();
  } catch (error) {
    failure ??= error as Error;
  }
  if (failure) {
    // saxes messages look like "3:14: unexpected close tag." — keep the text, expose the line.
    const match = /^(\d+):(\d+): (.*)$/s.exec(failure.message);
    const line = match ? Number(match[1]) : parser.line;
    throw new XmlSyntaxError(match ? match[3]! : failure.message, line);
  }
  if (!root) throw new XmlSyntaxError('no root element', 1);
  return root;
}

export function child(element: XmlElement, name: string): XmlElement | undefined {
  return element.children.find((c) => c.name === name);
}

export function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name);
}

/** All text inside an element, children included, in document order is not kept: own text only. */
export function textOf(element: XmlElement | undefined): string {
  return element ? element.text.trim() : '';
}
