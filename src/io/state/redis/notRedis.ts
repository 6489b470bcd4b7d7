/**
 * ioredis's words for a reply that is no RESP at all (`Unknown RESP type 72 "H". Please report this.`): the
 * server at `state.redis_url` speaks another protocol, which asking the user to start Redis would not fix.
 */
const NOT_RESP = /Unknown RESP type (\d+)|Protocol error/;

/** Whether a connect failed on a reply that is no Redis reply. */
export const notRespReply = (reason: string): boolean => NOT_RESP.test(reason);

/** The first bytes of RESP2 and RESP3 replies: a line that begins otherwise is another protocol's. */
const RESP_TYPES = "+-:$*_,#!=(%~>|";

/** A TLS server answers plain text with a TLS record: an alert (21) or a handshake (22). */
const TLS_RECORD = new Set([0x15, 0x16]);

/** At most this much of what the server said is quoted, its control characters left out. */
const QUOTED_CHARS = 80;

function quoted(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is left out
  return JSON.stringify(text.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").slice(0, QUOTED_CHARS));
}

/**
 * What a connect that got no Redis reply says (`reason` as ioredis put it; `greeting`, the first line the
 * server says unasked, as an SSH or SMTP server does, or answers a PING), or undefined when neither shows
 * another protocol. A Redis says nothing unasked but an error (`-ERR max number of clients reached`) before
 * it closes, and answers a PING in RESP; a line that is no RESP is another service's, also when svc saw only
 * the broken pipe after it.
 */
export function notRedis(
  label: string,
  reason: string,
  greeting: string | undefined,
): { problem: string; fix: string } | undefined {
  const found = NOT_RESP.exec(reason);
  const spokeFirst =
    greeting !== undefined && greeting.trim() !== "" && !RESP_TYPES.includes(greeting.charAt(0));
  if (found === null && !spokeFirst) return undefined;
  const byte = found?.[1] === undefined ? undefined : Number(found[1]);
  if (byte !== undefined && TLS_RECORD.has(byte))
    return {
      problem: `${label} answered with TLS, not a Redis reply`,
      fix: "a server that expects TLS needs rediss://: write rediss:// in state.redis_url, or fix its host and port",
    };
  const said = spokeFirst
    ? `it said ${quoted(greeting.trim())}`
    : byte === undefined
      ? "a protocol error"
      : byte >= 0x20 && byte < 0x7f
        ? `it began ${quoted(String.fromCharCode(byte))}`
        : `it began with byte 0x${byte.toString(16).padStart(2, "0")}`;
  return {
    problem: `${label} answered with something that is not a Redis reply (${said})`,
    fix: "another service listens at that address: fix the host and port in state.redis_url (Redis listens on 6379 unless its port setting says otherwise)",
  };
}
