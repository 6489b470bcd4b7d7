import { SvcError } from "../../errors.js";
import type { SubscribeOptions } from "./subscribeOptions.js";

/** C0 and C1 controls (CR, LF, tab, NEL …) and the Unicode line and paragraph separators. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

/** A value quoted as JSON, with the controls JSON leaves as they are (DEL, C1, U+2028, U+2029) escaped too. */
const quoted = (value: string) =>
  JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );

const REFUSED = "must not contain a line break, tab or other control character (pasted along with it?)";

/**
 * The options of `subscribe` whose values are one line: a chat id, an event type, a target or job name, an
 * extra's value (an e-mail subject is a header), a description (one cell of `svc webhook list`). A line
 * break or other control character in one is a paste accident or an unquoted `$'…'`, and would be stored
 * as it is: a chat id no platform knows, an event type no sender sends. `--prompt` is a template, whose
 * line breaks are meant; `--secret` is checked with what it was read from (checks.ts).
 */
export function checkOneLineOptions(options: SubscribeOptions): void {
  const refuse = (shown: string, fix: string) => {
    throw new SvcError("usage", `${shown}: ${REFUSED} — ${fix}`);
  };
  for (const value of options.events ?? [])
    if (CONTROL.test(value))
      refuse(`--events ${quoted(value)}`, "separate event types with commas (--events push,pull_request)");
  if (options.deliverChatId !== undefined && CONTROL.test(options.deliverChatId))
    refuse(`--deliver-chat-id ${quoted(options.deliverChatId)}`, "give the chat id alone");
  for (const [key, value] of Object.entries(options.deliverExtra ?? {}))
    if (CONTROL.test(value)) refuse(`--deliver-extra ${key}=${quoted(value)}`, "give the value on one line");
  const named: [string, string | false | undefined][] = [
    ["--deliver", options.deliver],
    ["--cron-job", options.cronJob],
  ];
  for (const [flag, value] of named)
    if (typeof value === "string" && CONTROL.test(value))
      refuse(`${flag} ${quoted(value)}`, "give the name alone");
  if (options.description !== undefined && CONTROL.test(options.description))
    refuse(
      `--description ${quoted(options.description)}`,
      "write it on one line (it is one cell of svc webhook list)",
    );
}
