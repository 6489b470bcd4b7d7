/**
 * JSON of subscription records, written by hand or by another tool. A number under `deliver_extra` is an id
 * (a chat, a thread), and JSON.parse would change it: a Discord channel id written unquoted
 * (`"chat_id": 123456789012345678`) comes out as 123456789012345680, another channel, and Slack's
 * `"thread_ts": 1700000000.000100` as 1700000000.0001, another thread. Such numbers are read as the text
 * written, as config.yaml reads every unquoted number under a route's `deliver_extra`.
 */

/** A JSON number at a position. */
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

const EXTRA_KEY = "deliver_extra";

/** An open object or array: the key it sits under (in an object), and for an object its current key. */
interface Frame {
  readonly object: boolean;
  readonly under: string | undefined;
  key: string | undefined;
  expectKey: boolean;
}

/** Index of the `"` that ends the string starting at `start` (a `"`). */
function stringEnd(json: string, start: number): number {
  let i = start + 1;
  while (i < json.length && json.charCodeAt(i) !== 0x22) i += json.charCodeAt(i) === 0x5c ? 2 : 1;
  return i;
}

/** `json` (valid JSON) with each number that is a value of a `deliver_extra` object put in quotes. */
export function quoteExtraNumbers(json: string): string {
  const stack: Frame[] = [];
  let out = "";
  let copied = 0;
  for (let i = 0; i < json.length; i++) {
    const ch = json[i];
    const top = stack.at(-1);
    if (ch === '"') {
      const end = stringEnd(json, i);
      if (top?.object === true && top.expectKey) {
        top.key = JSON.parse(json.slice(i, end + 1)) as string;
        top.expectKey = false;
      }
      i = end;
    } else if (ch === "{" || ch === "[") {
      const under = top?.object === true ? top.key : undefined;
      stack.push({ object: ch === "{", under, key: undefined, expectKey: ch === "{" });
    } else if (ch === "}" || ch === "]") {
      stack.pop();
    } else if (ch === ",") {
      if (top?.object === true) top.expectKey = true;
    } else if (ch === "-" || (ch !== undefined && ch >= "0" && ch <= "9")) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(json)?.[0] ?? ch;
      if (top?.object === true && top.under === EXTRA_KEY) {
        out += `${json.slice(copied, i)}"${token}"`;
        copied = i + token.length;
      }
      i += token.length - 1;
    }
  }
  return copied === 0 ? json : out + json.slice(copied);
}

/**
 * JSON.parse, except that a number under `deliver_extra` comes back as the text written. A syntax error is
 * JSON.parse's own, at the text's own positions.
 */
export function parseKeepingExtraNumbers(json: string): unknown {
  const parsed: unknown = JSON.parse(json);
  return json.includes(`"${EXTRA_KEY}"`) ? JSON.parse(quoteExtraNumbers(json)) : parsed;
}
