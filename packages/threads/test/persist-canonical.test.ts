import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/persistence/canonical-json.js';

// Expected strings are what CPython prints for
// json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=True).
describe('canonicalJson', () => {
  it('sorts keys recursively, without spaces', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('escapes every character outside printable ASCII as lower-case \\uXXXX (astral as a surrogate pair)', () => {
    expect(canonicalJson({ k: 'é ü 日本 😀 \x7f \n "q" \\ \x01' })).toBe(
      String.raw`{"k":"\u00e9 \u00fc \u65e5\u672c \ud83d\ude00 \u007f \n \"q\" \\ \u0001"}`,
    );
  });

  it('sorts keys by code point, as Python does (not by UTF-16 unit)', () => {
    expect(canonicalJson({ '😀': 2, '\uff61': 1, a: 0, B: 3 })).toBe(
      String.raw`{"B":3,"a":0,"\uff61":1,"\ud83d\ude00":2}`,
    );
  });

  it('prints numbers as JavaScript does', () => {
    expect(
      canonicalJson({
        i: 1,
        f: 1.5,
        whole: 1.0,
        e: 1e21,
        s: 1e-7,
        neg: -0,
        big: 2 ** 64,
        x: 0.1 + 0.2,
      }),
    ).toBe(
      '{"big":18446744073709552000,"e":1e+21,"f":1.5,"i":1,"neg":0,"s":1e-7,"whole":1,"x":0.30000000000000004}',
    );
  });

  it('drops undefined members, writes undefined array items as null, and refuses non-JSON numbers', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, true, false] })).toBe('{"b":[null,true,false]}');
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(/not a JSON number/);
    expect(() => canonicalJson({ n: Number.POSITIVE_INFINITY })).toThrow(/not a JSON number/);
    expect(() => canonicalJson({ n: 1n })).toThrow(/bigint/);
  });

  it('is stable under re-parsing', () => {
    const value = { z: [{ b: 'ñ', a: 2.5 }], a: 'x' };
    const once = canonicalJson(value);
    expect(canonicalJson(JSON.parse(once))).toBe(once);
  });
});
