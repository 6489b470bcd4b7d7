import type { Redis } from "ioredis";

/** One field of a `SENTINEL MASTERS` entry, a flat list of names and values. */
function field(entry: readonly unknown[], name: string): string | undefined {
  for (let i = 0; i + 1 < entry.length; i += 2)
    if (entry[i] === name && typeof entry[i + 1] === "string") return entry[i + 1] as string;
  return undefined;
}

/** "host:port, as name" of each primary a Sentinel watches (empty when it does not say). */
async function watchedPrimaries(redis: Redis): Promise<string[]> {
  let masters: unknown;
  try {
    masters = await redis.call("SENTINEL", "MASTERS");
  } catch {
    return [];
  }
  if (!Array.isArray(masters)) return [];
  return masters.flatMap((entry: unknown) => {
    if (!Array.isArray(entry)) return [];
    const [name, ip, port] = [field(entry, "name"), field(entry, "ip"), field(entry, "port")];
    return ip === undefined || port === undefined
      ? []
      : [`${ip}:${port}${name === undefined ? "" : `, as ${name}`}`];
  });
}

/**
 * A Redis Sentinel at `state.redis_url` (an application set up for Sentinel points at port 26379): it answers
 * PING and INFO but keeps no data and refuses SELECT and every data command. Undefined for any other server.
 */
export async function sentinelProblem(
  redis: Redis,
  label: string,
): Promise<{ problem: string; fix: string } | undefined> {
  let info: string;
  try {
    info = await redis.info("server");
  } catch {
    return undefined;
  }
  if (!/^redis_mode:sentinel\b/m.test(info)) return undefined;
  const primaries = await watchedPrimaries(redis);
  return {
    problem: `${label} is a Redis Sentinel (redis_mode:sentinel), which watches Redis servers and keeps no data`,
    fix: `point state.redis_url at the primary it watches (${primaries.length === 0 ? "SENTINEL MASTERS lists it" : primaries.join("; ")}): svc connects to one Redis server, not through Sentinel`,
  };
}
