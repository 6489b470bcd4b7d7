import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { cutText } from "../cutText.js";

/** JSON-RPC's code for an error svc reports in the server's stead (Internal error). */
const INTERNAL_ERROR = -32603;
/** How much of the server's answer the error quotes. */
const QUOTED_CHARS = 300;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Redacts credentials from a server's text (none by default). */
export type Redact = (text: string) => string;

const asItIs: Redact = (text) => text;

/** `value` as JSON, `redact`ed before it is cut at QUOTED_CHARS (a cut through a credential keeps its start). */
function quoted(value: unknown, redact: Redact): string {
  const text = redact(JSON.stringify(value) ?? String(value));
  return text.length > QUOTED_CHARS ? `${cutText(text, QUOTED_CHARS)}…` : text;
}

/**
 * A message that writes the members it does not use as `null`, as a Go server's message struct without
 * `omitempty` does, as the message it means: an answer that carries both `result` and `error` (JSON-RPC
 * 1.0's habit) without the null one, a request or notification without `params: null` (and a notification
 * without `id: null`). JSON-RPC 2.0 allows none of these, so the SDK's schema refuses them: every answer of
 * such a server failed, and its requests (a ping) and notifications (`tools/list_changed`) were skipped.
 * Undefined for a message without such a member.
 */
export function withoutNullMembers(value: unknown): Record<string, unknown> | undefined {
  if (!isObject(value)) return undefined;
  const request = typeof value.method === "string";
  const answer = !request && "result" in value && "error" in value;
  const unused = (key: string) =>
    value[key] === null &&
    (request ? key !== "method" : answer && (key === "result" ? value.error !== null : key === "error"));
  const keys = Object.keys(value);
  const withoutUnused = keys.some(unused)
    ? Object.fromEntries(keys.filter((key) => !unused(key)).map((key) => [key, value[key]]))
    : undefined;
  // `"_meta": null` in a result or params (pydantic's model_dump() writes every unset field so) is left out
  // too: the SDK's message schema takes `_meta` as an object only, and refused the whole message.
  const message = withoutUnused ?? value;
  const member = request ? "params" : "result";
  const held = message[member];
  if (!isObject(held) || held._meta !== null) return withoutUnused;
  const { _meta: _null, ...rest } = held;
  return { ...message, [member]: rest };
}

/**
 * A server's answer to a request that is not a valid JSON-RPC response (an error without a message, as a Go
 * server's `omitempty` leaves it; a code that is not an integer; a `result` that is not an object; neither
 * result nor error), as the error response svc reads in its place, or undefined for anything that is not an
 * answer (no `id`, or a `method`: a request or notification; or none of `jsonrpc`, `result` and `error`: a
 * log line). Skipped like any unreadable line, such an answer left its call waiting out the whole `timeout`
 * and then reported that the server did not answer. What it quotes of the answer is `redact`ed first.
 */
export function unreadableAnswer(value: unknown, redact: Redact = asItIs): JSONRPCMessage | undefined {
  if (!isObject(value) || "method" in value) return undefined;
  const id = value.id;
  if (typeof id !== "string" && typeof id !== "number") return undefined;
  // An object with an `id` but none of jsonrpc, result and error is no answer: a JSON log line on stdout
  // (a logger that writes the id of the request it handles), skipped like any other log line.
  if (!("jsonrpc" in value) && !("result" in value) && !("error" in value)) return undefined;
  const error = value.error;
  let code = INTERNAL_ERROR;
  let message: string;
  if ("error" in value && isObject(error)) {
    const codeOk = Number.isInteger(error.code);
    if (codeOk) code = error.code as number;
    const badCode = codeOk
      ? ""
      : ` (its error code ${quoted(error.code, redact)} is not a JSON-RPC integer code)`;
    message =
      typeof error.message === "string" && error.message !== ""
        ? `${error.message}${badCode}`
        : `the server answered with an error without a message${badCode}: ${quoted(error, redact)}`;
  } else if ("error" in value) {
    message = `the server answered with an error svc cannot read: ${quoted(error, redact)}`;
  } else if ("result" in value && !isObject(value.result)) {
    message = `the server's answer has a result that is not a JSON object: ${quoted(value.result, redact)}`;
  } else if ("result" in value && value.jsonrpc !== "2.0") {
    const version =
      value.jsonrpc === undefined ? "no jsonrpc" : `"jsonrpc": ${quoted(value.jsonrpc, redact)}`;
    message = `the server's answer is not JSON-RPC 2.0 (${version}, where "jsonrpc": "2.0" belongs)`;
  } else if ("result" in value) {
    const meta = (value.result as Record<string, unknown>)._meta;
    message =
      meta !== undefined && !isObject(meta)
        ? `the server's answer has a result whose _meta is not a JSON object: ${quoted(meta, redact)}`
        : `the server's answer is not a JSON-RPC 2.0 response svc can read: ${quoted(value, redact)}`;
  } else {
    message = `the server's answer holds neither a result nor an error: ${quoted(value, redact)}`;
  }
  return { jsonrpc: "2.0", id, error: { code, message } };
}
