import { closedBeforeHandshake, type RedisAddress, serverGreeting } from "./greeting.js";
import { notRespReply } from "./notRedis.js";
import { type Unreachable, unreachable } from "./unreachable.js";

/**
 * Why a connection to `url` (shown as `label`) failed with `reason` (its socket's error, else the
 * connect's), and the fix: what the start says, and a `rediss://` reconnect during an outage. A server that
 * closed the connection it took may have said why first (its maxclients reached), or answers a PING in
 * another protocol; over TLS it says nothing, so one more connection tells whether it closes before the
 * handshake (its maxclients) or after it (a client certificate it requires).
 */
export async function connectFailure(
  url: string,
  label: string,
  address: RedisAddress,
  reason: string,
): Promise<Unreachable> {
  const tls = /^rediss:/i.test(url);
  const closed = /EPIPE|ECONNRESET|Connection is closed/i.test(reason);
  const said = !tls && (closed || notRespReply(reason)) ? await serverGreeting(address) : undefined;
  // Nothing said unasked: its answer to a PING tells another service (whose answer a reset may have cut
  // off before svc's client read it) from a Redis that closed without a word.
  const greeting =
    said === undefined && !tls && closed ? await serverGreeting(address, 1000, "PING\r\n") : said;
  const beforeHandshake =
    tls && /ECONNRESET|socket hang up|before secure TLS connection/i.test(reason)
      ? await closedBeforeHandshake(address)
      : false;
  return unreachable(url, label, reason, greeting, beforeHandshake);
}
