/** The oldest Redis svc's run queue (BullMQ) takes: its connections refuse an older one. */
const MINIMUM_MAJOR = 5;

/**
 * A Redis older than the run queue needs, from its `INFO` text, as the start's problem and fix; undefined for
 * one recent enough, or a server that reports another product's version (Valkey, Dragonfly), which BullMQ
 * does not judge by `redis_version`. BullMQ's refusal left the gateway spinning at full CPU, answering nothing.
 */
export function olderThanNeeded(info: string, label: string): { problem: string; fix: string } | undefined {
  if (/^(?:valkey_version|dragonfly_version):/m.test(info)) return undefined;
  const version = /^redis_version:(\d+)\.(\d+)\.?(\d+)?\s*$/m.exec(info);
  if (version === null || Number(version[1]) >= MINIMUM_MAJOR) return undefined;
  const written = version[0].slice("redis_version:".length).trim();
  return {
    problem: `${label} runs Redis ${written} (redis_version:${written}), older than the ${MINIMUM_MAJOR}.0 svc's run queue (BullMQ) needs`,
    fix: "upgrade it (Redis 7 is enough)",
  };
}
