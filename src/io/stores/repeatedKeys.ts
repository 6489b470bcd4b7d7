const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LINE_FEED = 0x0a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** A name a store's JSON writes twice in one object, and the lines of both. */
export interface RepeatedKey {
  readonly key: string;
  /** The top-level key of the object it is repeated in (`jobs`); undefined in the top-level object itself. */
  readonly within: string | undefined;
  readonly lines: readonly [first: number, second: number];
}

/** The index of the quote that ends the string opening at `start`. */
function stringEnd(json: string, start: number): number {
  for (let at = json.indexOf('"', start + 1); at >= 0; at = json.indexOf('"', at + 1)) {
    let backslashes = 0;
    while (json.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
  return json.length;
}

interface Frame {
  readonly object: boolean;
  /** The keys seen so far with their lines, in an object whose repeats are looked for. */
  readonly keys: Map<string, number> | undefined;
  readonly name: string | undefined;
}

/**
 * The first name written twice in the top-level object of valid JSON `json`, or in an object directly under one
 * of its `recordFields` (`jobs`): JSON.parse keeps the last and drops the first without a word, so a record
 * copied by hand under the same name would be lost at the next write of the store.
 */
export function repeatedRecordKey(json: string, recordFields: ReadonlySet<string>): RepeatedKey | undefined {
  const stack: Frame[] = [];
  let line = 1;
  let expectKey = false;
  let lastKey: string | undefined;
  for (let at = 0; at < json.length; at++) {
    const c = json.charCodeAt(at);
    if (c === LINE_FEED) line += 1;
    else if (c === QUOTE) {
      const end = stringEnd(json, at);
      const frame = stack.at(-1);
      if (expectKey && frame?.object === true) {
        const raw = json.slice(at + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(json.slice(at, end + 1)) as string) : raw;
        const first = frame.keys?.get(key);
        if (first !== undefined) return { key, within: frame.name, lines: [first, line] };
        frame.keys?.set(key, line);
        lastKey = key;
        expectKey = false;
      }
      at = end;
    } else if (c === OPEN_BRACE) {
      const watched =
        stack.length === 0 || (stack.length === 1 && lastKey !== undefined && recordFields.has(lastKey));
      stack.push({
        object: true,
        keys: watched ? new Map() : undefined,
        name: stack.length === 1 ? lastKey : undefined,
      });
      expectKey = true;
    } else if (c === OPEN_BRACKET) {
      stack.push({ object: false, keys: undefined, name: undefined });
      expectKey = false;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      stack.pop();
      expectKey = false;
    } else if (c === COMMA) expectKey = stack.at(-1)?.object === true;
  }
  return undefined;
}
