import { readlinkSync } from "node:fs";

let cached: string | null | undefined;

/**
 * This process's PID namespace as Linux names it (`pid:[4026531836]`): a container's processes and its
 * host's see different pids for one process, and none of each other's but the host's view of the
 * container's. Undefined where /proc does not show it (macOS).
 */
export function pidNamespace(): string | undefined {
  if (cached === undefined) {
    try {
      cached = readlinkSync("/proc/self/ns/pid");
    } catch {
      cached = null;
    }
  }
  return cached ?? undefined;
}
