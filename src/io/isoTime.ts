/** The largest time value a Date holds either side of the epoch (ECMAScript's TimeClip). */
const MAX_TIME = 8.64e15;

let lastMs = Number.NaN;
let lastText = "";
/** The start of the second last formatted in full (a whole millisecond), and its text up to the milliseconds. */
let secondStart = Number.NaN;
let secondHead = "";

/**
 * `new Date(ms).toISOString()`, for the times the gateway writes on each accepted request's lines (the log's
 * INFO line, the delivery history's records, the run journal's line). One formatter for all of them: the text
 * of the last millisecond is kept, and a time within the second last formatted in full gets only its
 * milliseconds written after that second's text. `toISOString` costs ~1–1.5 µs on Node 20, and each writer
 * called it once per millisecond with a cache of its own. The same text for every time (tested); what Date
 * refuses (NaN, past ±8.64e15 ms) throws its RangeError.
 */
export function isoTime(ms: number): string {
  if (ms === lastMs) return lastText;
  const intoSecond = ms - secondStart;
  let text: string;
  if (intoSecond >= 0 && intoSecond < 1000 && Number.isInteger(intoSecond) && Math.abs(ms) <= MAX_TIME) {
    text = `${secondHead}${intoSecond < 10 ? "00" : intoSecond < 100 ? "0" : ""}${intoSecond}Z`;
  } else {
    text = new Date(ms).toISOString();
    // A fraction of a millisecond is cut off as Date cuts it: such a time is formatted in full each time.
    if (Number.isInteger(ms)) {
      secondStart = ms - (((ms % 1000) + 1000) % 1000);
      secondHead = text.slice(0, -4);
    } else secondStart = Number.NaN;
  }
  lastMs = ms;
  lastText = text;
  return text;
}
