import { createConnection } from "node:net";

/** Where a Redis listens, as ioredis read it from `state.redis_url`: a host and port, or a unix socket. */
export interface RedisAddress {
  readonly host?: string | undefined;
  readonly port?: number | undefined;
  readonly path?: string | null | undefined;
}

/**
 * The first line a Redis sends before it is asked anything, within `waitMs` (undefined when it says nothing).
 * One at its `maxclients` writes `-ERR max number of clients reached` and closes every new connection, which
 * its client only sees as a reset or a broken pipe (its first command written into a closed socket).
 */
export function serverGreeting(address: RedisAddress, waitMs = 1000): Promise<string | undefined> {
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
    socket.on("data", (chunk: Buffer) => {
      said += chunk.toString("utf8");
      if (said.includes("\r\n") || said.length > 512) done();
    });
    socket.on("error", done);
    socket.on("close", done);
  });
}
