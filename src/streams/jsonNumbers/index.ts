/**
 * Numbers as the sender wrote them. `JSON.parse` turns `1.0` into `1` and `12345678901234567890` into
 * `12345678901234567000`; templates ("the nested payload value") and the script's stdin
 * must show the value that was sent. Node 20 has no JSON source-text access, so after `JSON.parse` a
 * scan of the text finds numbers whose JavaScript text differs from their source (rare: most payloads
 * have none, and then this costs one pass over the text) and remembers their source per holder object.
 * Likewise the order of an object's keys: a JavaScript object lists keys that are array indices
 * (`"2"`, `"10"`) first, in numeric order, so `{"id": 1, "2": "x"}` would print as `{"2": "x", "id": 1}`;
 * the order the sender wrote is remembered for such an object and serialized back.
 *
 * `scan.ts`: the one pass over the text; `record.ts`: the walk that records kept numbers and key orders;
 * `kept.ts`: where they are kept (on the containers themselves); `parse.ts`: parsing and reading them back;
 * `write.ts`: serializing with them.
 */
export { JsonTooDeep, MAX_JSON_DEPTH, numberText, parseJson } from "./parse.js";
export { ALTERED_NUMBERS, DIGIT_KEYS, NESTED_TOO_DEEP, scanJsonText } from "./scan.js";
export { extendObject, stringifyJson, stringifyJsonHead } from "./write.js";
