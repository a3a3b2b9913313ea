/**
 * Where a JSON text breaks JSON's grammar (RFC 8259), for configuration errors that say where:
 * V8's JSON.parse names a position for some mistakes ("… in JSON at position 7") and only a
 * snippet for others ("Unexpected token '}', …"), so the position is found here, by a scanner of
 * the grammar that stops at the first character that cannot be JSON. Used only once JSON.parse
 * has failed.
 */

export interface JsonErrorPlace {
  /** 0-based offset of the first character that cannot be JSON (the length: the text ended early). */
  readonly offset: number;
  /** 1-based. */
  readonly line: number;
  /** 1-based, in UTF-16 code units like the offset. */
  readonly column: number;
  /** `unexpected '}'`, or `unexpected end of text`. */
  readonly problem: string;
}

class Stop {
  constructor(readonly offset: number) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = '"\\/bfnrt';

/** The place of the first error in `text`, or undefined when it is valid JSON. */
export function jsonErrorPlace(text: string): JsonErrorPlace | undefined {
  let i = 0;
  const fail = (): never => {
    throw new Stop(i);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const expect = (c: string) => {
    if (text[i] !== c) fail();
    i++;
  };
  const string = () => {
    expect('"');
    for (;;) {
      const c = text[i];
      if (c === undefined || c < ' ') fail();
      if (c === '"') return void i++;
      if (c !== '\\') {
        i++;
        continue;
      }
      i++;
      if (ESCAPES.includes(text[i] ?? '\0')) i++;
      else if (text[i] === 'u') {
        i++;
        for (let k = 0; k < 4; k++) {
          if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail();
          i++;
        }
      } else fail();
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{')
      return members('}', () => {
        string();
        ws();
        expect(':');
        value();
      });
    if (c === '[') return members(']', value);
    if (c === '"') return string();
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, i)) return void (i += literal.length);
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail();
    i += m![0].length;
  };
  const members = (close: string, member: () => void) => {
    i++;
    ws();
    if (text[i] === close) return void i++;
    for (;;) {
      ws();
      member();
      ws();
      if (text[i] === ',') i++;
      else return void expect(close);
    }
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return place(text, err.offset);
  }
}

function place(text: string, offset: number): JsonErrorPlace {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - (before.lastIndexOf('\n') + 1) + 1;
  const c = text[offset];
  const problem = c === undefined ? 'unexpected end of text' : `unexpected ${JSON.stringify(c)}`;
  return { offset, line, column, problem };
}

/** `at line 1, column 8 (unexpected "}")`, for an error message. */
export function describeJsonError(text: string): string {
  const p = jsonErrorPlace(text);
  return p ? `at line ${p.line}, column ${p.column} (${p.problem})` : 'somewhere';
}
