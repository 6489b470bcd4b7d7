import { openRedisState, type RedisState, type RedisStateOptions } from "../../src/state/redisState.js";

/**
 * svc's redis state on the Redis at `url` under `prefix`, as the tests open it: one run at a time, a rate
 * limit no test reaches, a clock that does not move; `options` gives what its runs need (`logger`, `lookup`,
 * `execute`) and whatever else the test sets.
 */
export function openTestRedisState(
  url: string,
  prefix: string,
  options: Omit<RedisStateOptions, "settings" | "configFile" | "maxConcurrentRuns" | "rateLimit" | "elapsed">,
): Promise<RedisState> {
  return openRedisState({
    settings: { backend: "redis", redis_url: url, redis_key_prefix: prefix } as never,
    configFile: "config.yaml",
    maxConcurrentRuns: 1,
    rateLimit: 1000,
    elapsed: () => 0,
    ...options,
  });
}
