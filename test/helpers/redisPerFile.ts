import type { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll } from "vitest";
import { commandOptions, connectRedis } from "../../src/io/state/redis/connection.js";
import { startTestRedis, type TestRedis } from "./redis.js";

/**
 * A redis-server of the test file's own, started before its tests with one connection to it (`redis`), both
 * gone after them. With `roomAfterEach`, a test that made it refuse writes (`maxmemory 1`: full under
 * noeviction) leaves it with room again (`maxmemory 0`) after each test. Call at the top of a test file.
 */
export function redisPerFile(options: { roomAfterEach?: boolean } = {}): {
  readonly server: TestRedis;
  readonly redis: Redis;
} {
  let server: TestRedis | undefined;
  let redis: Redis | undefined;
  beforeAll(async () => {
    server = await startTestRedis();
    redis = await connectRedis(server.url, "config.yaml", commandOptions());
  });
  if (options.roomAfterEach === true)
    afterEach(async () => {
      await redis?.config("SET", "maxmemory", "0");
    });
  afterAll(async () => {
    redis?.disconnect();
    await server?.cleanup();
  });
  return {
    get server() {
      if (server === undefined) throw new Error("redisPerFile: the file's server is not started yet");
      return server;
    },
    get redis() {
      if (redis === undefined) throw new Error("redisPerFile: the file's server is not started yet");
      return redis;
    },
  };
}
