/**
 * Reads item files as strict UTF-8. Signatures are checked over text, and a decoder that
 * replaces invalid bytes with U+FFFD would map two different files onto one text — one signed,
 * the other not. Bytes that are not UTF-8 are therefore refused before verification.
 */
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { IntegrityError } from './integrity-error.js';

export interface ItemFileContent {
  /** The bytes read: the only bytes that are verified, copied and run. */
  bytes: Buffer;
  /** The same bytes as text (a lossless decoding: they are valid UTF-8). */
  text: string;
}

/** Decodes `bytes` as UTF-8; throws `IntegrityError` when they are not valid UTF-8. */
export function decodeItemBytes(bytes: Buffer, path: string): string {
  if (!isUtf8(bytes)) {
    throw new IntegrityError(
      'modified',
      `Not UTF-8 text: ${path}\nItems are UTF-8 text; bytes that are not valid UTF-8 cannot be verified (a lossy decoding would hide them from the signature)`,
      { hint: 'Save the file as UTF-8, review it, and sign it again.', details: { path } },
    );
  }
  return bytes.toString('utf8');
}

/** Reads an item file once, as strict UTF-8 (see `decodeItemBytes`). */
export function readItemFile(path: string): ItemFileContent {
  const bytes = readFileSync(path);
  return { bytes, text: decodeItemBytes(bytes, path) };
}

/** The text of an item file, read as strict UTF-8. */
export function readItemText(path: string): string {
  return readItemFile(path).text;
}
