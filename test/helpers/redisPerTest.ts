import type { Redis } from "ioredis";
import { afterEach } from "vitest";
import { commandOptions, connectRedis } from "../../src/io/state/redis/connection.js";
import { startTestRedis, type TestRedis } from "./redis.js";

/**
 * A redis-server of each test's own, started by the test (`start`): after the test, what was opened on it
 * (the connections `connection` made, whatever `closeAfter` was given) is closed, then the server goes.
 * Call at the top of a test file.
 */
export function redisPerTest() {
  let server: TestRedis | undefined;
  const closers: Array<() => void> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) close();
    await server?.cleanup();
    server = undefined;
  });
  return {
    async start(): Promise<TestRedis> {
      server = await startTestRedis();
      return server;
    },
    /**
     * A connection to the test's server (at `url`, one of its addresses, when given), quiet about its errors:
     * a test that stops the server or refuses its commands checks what it needs to.
     */
    async connection(url?: string): Promise<Redis> {
      if (server === undefined) throw new Error("redisPerTest: start() the test's server before connecting");
      const redis = await connectRedis(url ?? server.url, "config.yaml", commandOptions());
      redis.on("error", () => {});
      closers.push(() => redis.disconnect());
      return redis;
    },
    closeAfter(close: () => void): void {
      closers.push(close);
    },
  };
}
