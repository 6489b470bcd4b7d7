import type { Redis } from "ioredis";

/**
 * The commands svc sends (its own scripts, the subscription store's transactions, its checks) and those its
 * run queue (BullMQ) sends and calls from its scripts. A Redis whose redis.conf renames one away
 * (`rename-command DEL ""`, as hardening guides advise for DEL, PEXPIRE, RENAME, SREM, EVAL …) fails every
 * request or job that needs it. Each is in Redis 5.0, the oldest svc takes (`serverVersion.ts`, checked
 * first); LPOS (6.0.6) is left out: BullMQ calls it only on a server that has it.
 */
export const NEEDED_COMMANDS: readonly string[] = [
  "BZPOPMIN EVAL EVALSHA EXEC EXPIRE INFO MULTI PING SELECT TTL UNWATCH WATCH DEL EXISTS GET HDEL",
  "HEXISTS HGET HGETALL HINCRBY HLEN HMGET HMSET HSET INCR INCRBY LINDEX LLEN LPOP LPUSH LRANGE LREM",
  "LSET LTRIM PEXPIRE PEXPIREAT PTTL RENAME RPOP RPOPLPUSH RPUSH SADD SCARD SET SISMEMBER SMEMBERS SREM",
  "TIME TYPE UNLINK XADD XDEL XLEN XRANGE XREAD XTRIM ZADD ZCARD ZCOUNT ZLEXCOUNT ZPOPMIN ZRANGE",
  "ZRANGEBYLEX ZRANGEBYSCORE ZREM ZREMRANGEBYRANK ZREMRANGEBYSCORE ZREVRANGE ZREVRANGEBYSCORE ZSCORE",
]
  .join(" ")
  .split(" ");

/** "A, B and C". */
function listed(names: readonly string[]): string {
  return names.length === 1 ? (names[0] as string) : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

/**
 * The needed commands this server does not know (`COMMAND INFO` answers nil for a command renamed away, or
 * to another name), as the start's problem and fix; undefined when it knows them all, or does not say
 * (`COMMAND` itself refused or renamed).
 */
export async function renamedAway(
  redis: Redis,
  label: string,
): Promise<{ problem: string; fix: string } | undefined> {
  let info: unknown;
  try {
    info = await redis.call("COMMAND", "INFO", ...NEEDED_COMMANDS);
  } catch {
    return undefined;
  }
  if (!Array.isArray(info) || info.length !== NEEDED_COMMANDS.length) return undefined;
  const missing = NEEDED_COMMANDS.filter((_, i) => info[i] === null).sort();
  if (missing.length === 0) return undefined;
  const them = missing.length === 1 ? "it" : "them";
  return {
    problem: `${label} does not run ${listed(missing)} (renamed away: rename-command in its redis.conf)`,
    fix: `svc's own scripts and its run queue (BullMQ) use ${them}: take ${them} out of the rename-command lines of its redis.conf`,
  };
}
