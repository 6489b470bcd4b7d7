import { describeError } from "../../../errors.js";
import {
  CLIENT_CERT_REFUSED,
  HANDSHAKE_REFUSED,
  NOTHING_IN_COMMON,
  OUT_OF_DATE,
  UNTRUSTED,
  WRONG_HOST,
} from "../../mcp/tlsHints.js";
import { notRedis } from "./notRedis.js";

/**
 * OpenSSL's error text as Node passes it on (`<hex>:error:<code>:SSL routines:<function>:<reason>:<source
 * file>:<line>:SSL alert number 116`, ending in a newline): its reason is what a message needs.
 */
const OPENSSL = /^[0-9A-F]+:error:[0-9A-F]+:SSL routines:[^:]*:([^:]+):/;

/** A connect's failure as a message says it: OpenSSL's reason alone (its text names a thread, a file, a line), else the error. */
export const failureReason = (error: string): string => OPENSSL.exec(error)?.[1] ?? error.trim();

/** svc sends Redis no client certificate: what a Redis that requires one needs changed. */
const WITHOUT_CLIENT_CERT =
  "set tls-auth-clients optional in its redis.conf (yes, its default with TLS, refuses every client without one) and authenticate svc with the password or ACL user in state.redis_url";

const MAXCLIENTS_FIX =
  "close the clients that hold its connections (CLIENT LIST shows them) or raise maxclients in its redis.conf (CONFIG SET maxclients for the running server); each gateway instance holds about 8";

/** What a failed connect to `state.redis_url` says: the problem and what to change. */
export interface Unreachable {
  readonly problem: string;
  readonly fix: string;
}

/**
 * A Redis that turns a connection away says why before it closes it (`greeting`, its first line), which its
 * client only sees as a reset or a broken pipe: at its `maxclients`, or in protected mode reached from
 * another host. Undefined for anything else it said (or nothing).
 */
export function turnedAway(label: string, greeting: string | undefined): Unreachable | undefined {
  const full = /^-?(ERR max number of clients reached)/.exec(greeting ?? "")?.[1];
  if (full !== undefined)
    return {
      problem: `${label} refuses new clients: it has as many as its maxclients allows (${full})`,
      fix: MAXCLIENTS_FIX,
    };
  const denied = /^-?(DENIED Redis is running in protected mode)/.exec(greeting ?? "")?.[1];
  if (denied !== undefined)
    return {
      problem: `${label} refuses connections from other hosts: it runs in protected mode, with no password set (${denied})`,
      fix: "give it a password (requirepass in its redis.conf) and write it in state.redis_url (redis://:password@host:6379/0), or set protected-mode no where only trusted hosts reach it",
    };
  return undefined;
}

/** The fix for a Redis that is simply not there: nothing more is known of it. */
export const startRedisFix = (label: string): string =>
  `start Redis at ${label}, or fix state.redis_url (redis://host:6379/0)`;

/**
 * Why svc could not connect to `url` (shown as `label`, without its password) and the fix, from the
 * socket's error (and `greeting`, what the server said unasked before it closed the connection). A TLS certificate it cannot verify, or a server that asks svc for a client certificate
 * (Redis's `tls-auth-clients yes`), is no Redis to start; nor is one that refuses the handshake with OpenSSL's
 * generic `handshake failure`, whose two causes (no TLS version or cipher in common: its `tls-protocols`,
 * `tls-ciphers`, `tls-ciphersuites`; a client certificate it requires, under TLS 1.2) are both named, since
 * the alert does not tell them apart; a scheme that does not match
 * the server (rediss:// to a server without TLS waits for a handshake that never comes; redis:// to a
 * TLS port is reset) is named as a likely cause.
 */
export function unreachable(
  url: string,
  label: string,
  error: string,
  greeting?: string,
  closedBeforeHandshake = false,
): Unreachable {
  const tls = /^rediss:/i.test(url);
  const away = turnedAway(label, greeting);
  if (away !== undefined) return away;
  const foreign = notRedis(label, error, greeting);
  if (foreign !== undefined) return foreign;
  const start = startRedisFix(label);
  const reason = failureReason(error);
  // Over TLS a Redis at its maxclients closes each new connection before the handshake, saying nothing.
  if (tls && closedBeforeHandshake)
    return {
      problem: `${label} closed the connection before the TLS handshake (${reason}), as a Redis does that has as many clients as its maxclients allows (it says so only without TLS)`,
      fix: MAXCLIENTS_FIX,
    };
  if (tls && CLIENT_CERT_REFUSED.test(reason))
    return {
      problem: `${label} asks for a TLS client certificate (${reason})`,
      fix: `svc sends none to Redis: ${WITHOUT_CLIENT_CERT}`,
    };
  if (tls && HANDSHAKE_REFUSED.test(reason))
    return {
      problem: `${label} refused the TLS handshake (${reason})`,
      fix: `either ${NOTHING_IN_COMMON} (tls-protocols, tls-ciphers and tls-ciphersuites in its redis.conf); or it requires a client certificate, which svc does not send to Redis: ${WITHOUT_CLIENT_CERT}`,
    };
  if (tls && OUT_OF_DATE.test(reason))
    return {
      problem: `the TLS certificate of ${label} is out of date (${reason})`,
      fix: "renew it on the server",
    };
  if (tls && WRONG_HOST.test(reason))
    return {
      problem: `the TLS certificate of ${label} does not name its host (${reason})`,
      fix: "write the host name the certificate lists in state.redis_url, or give the server a certificate for this host",
    };
  if (tls && UNTRUSTED.test(reason))
    return {
      problem: `the TLS certificate of ${label} is not issued by a CA this system trusts (${reason})`,
      fix: "for a private or self-signed CA, start svc with NODE_EXTRA_CA_CERTS set to that CA's PEM file",
    };
  const problem = `cannot reach ${label} (${reason})`;
  if (tls && /ETIMEDOUT|wrong version number|packet length too long/i.test(reason))
    return { problem, fix: `${start}; a server without TLS needs redis://, not rediss://` };
  // A unix socket (?path=) this user may not open: Redis runs.
  if (/connect EACCES/.test(reason))
    return {
      problem,
      fix: "this user may not open that socket: let it (unixsocketperm in Redis's redis.conf, or the socket's group), or fix state.redis_url",
    };
  // Connected, and no answer in time: a server is there (frozen, paused, overloaded, or no Redis at all).
  if (/Command timed out/i.test(reason))
    return {
      problem: `${label} took the connection but did not answer in time (${reason})`,
      fix: "a frozen (SIGSTOP), paused (CLIENT PAUSE) or overloaded Redis, or another service on that port: check that server, or fix state.redis_url",
    };
  if (!tls && /ECONNRESET|Connection is closed/i.test(reason))
    return { problem, fix: `${start}; a server that expects TLS needs rediss://` };
  // Over TLS 1.3 a server refuses a client certificate after the handshake: its alert may come after the reset.
  if (tls && /ECONNRESET|socket hang up/i.test(reason))
    return {
      problem,
      fix: `${start}; a Redis that requires a TLS client certificate (tls-auth-clients yes, its default with TLS) resets svc, which sends none: set tls-auth-clients optional in its redis.conf`,
    };
  return { problem, fix: start };
}

/**
 * ioredis's words for a command refused while the connection is down (no offline queue: the command is
 * never sent), which name its option rather than the outage.
 */
const OFFLINE = /enableOfflineQueue|Connection is closed/;

/** Whether a command failed unsent because the connection is down (closed, or not connected again yet). */
export const failedOffline = (err: unknown): boolean => OFFLINE.test(describeError(err));

/** Why a Redis command failed, for a log line: an outage is named as one; anything else as it came. */
export function redisCommandFailure(err: unknown): string {
  return failedOffline(err) ? "Redis is unreachable; svc reconnects by itself" : describeError(err);
}
