import { silentLogger } from "../../src/io/log.js";
import { createRedisHealth } from "../../src/io/state/redis/connection.js";
import type { redisKeys } from "../../src/io/state/redis/keys.js";
import { createSharedQueue, type SharedQueue } from "../../src/io/state/redis/sharedQueue.js";

/** A "runs" queue on the Redis at `url`, one job at a time, whose jobs hand their `n` to `ran`. */
export function runsQueue(
  url: string,
  keys: ReturnType<typeof redisKeys>,
  ran: (n: number) => void,
): SharedQueue<{ n: number }> {
  return createSharedQueue<{ n: number }>({
    url,
    name: "runs",
    keys,
    health: createRedisHealth("test", silentLogger()),
    logger: silentLogger(),
    concurrency: 1,
    async process(data) {
      ran(data.n);
    },
  });
}
