import { createConnection, isIP } from "node:net";
import { connect as tlsConnect } from "node:tls";

/** Where a Redis listens, as ioredis read it from `state.redis_url`: a host and port, or a unix socket. */
export interface RedisAddress {
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly path?: string | null | undefined;
}

/**
 * The first line a Redis sends before it is asked anything, within `waitMs` (undefined when it says nothing).
 * One at its `maxclients` writes `-ERR max number of clients reached` and closes every new connection, which
 * its client only sees as a reset or a broken pipe (its first command written into a closed socket). With
 * `ask`, the first line of its answer to that (`PING\r\n`: what another service answers shows its protocol).
 */
export function serverGreeting(
  address: RedisAddress,
  waitMs = 1000,
  ask?: string,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket =
      typeof address.path === "string" && address.path !== ""
        ? createConnection({ path: address.path })
        : createConnection({ host: address.host ?? "127.0.0.1", port: address.port ?? 6379 });
    let said = "";
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const line = said.split("\r\n")[0]?.trim();
      resolve(line === undefined || line === "" ? undefined : line);
    };
    const timer = setTimeout(done, waitMs);
    if (ask !== undefined) socket.once("connect", () => socket.write(ask));
    socket.on("data", (chunk: Buffer) => {
      said += chunk.toString("utf8");
      if (said.includes("\r\n") || said.length > 512) done();
    });
    socket.on("error", done);
    socket.on("close", done);
  });
}

/**
 * Whether a TLS server closes a new connection before the TLS handshake ends, within `waitMs`: a Redis at its
 * `maxclients` does, saying nothing (its reason, sent in clear without TLS, is not sent over TLS at all),
 * which its client sees as a reset or a close before the secure connection, as it sees a server that
 * refuses a client certificate after the handshake. False when the handshake ended (or the server answered
 * it with an alert), no server took the connection, or nothing ended in time. The server's certificate is
 * not checked: only whether it answers.
 */
export function closedBeforeHandshake(address: RedisAddress, waitMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    if (typeof address.path === "string" && address.path !== "") {
      resolve(false);
      return;
    }
    const host = address.host ?? "127.0.0.1";
    const socket = tlsConnect({
      host,
      port: address.port ?? 6379,
      ...(isIP(host) === 0 ? { servername: host } : {}),
      rejectUnauthorized: false,
    });
    const done = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(closed);
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on("secureConnect", () => done(false));
    // A reset or a close before the secure connection; not a refused connect (no server) or an alert.
    socket.on("error", (err) => done(/ECONNRESET|before secure TLS connection/.test(err.message)));
    socket.on("close", () => done(true));
  });
}
