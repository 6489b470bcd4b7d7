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

/**
 * What gateway.pid holds: the pid on its first line (`kill -HUP $(head -n1 gateway.pid)`, systemd's
 * `PIDFile=` and start-stop-daemon read that), then the PID namespace the pid is a pid of.
 */
export function pidFileText(pid: number = process.pid): string {
  const namespace = pidNamespace();
  return namespace === undefined ? `${pid}\n` : `${pid}\n${namespace}\n`;
}

/** The pid and namespace a gateway.pid holds (no namespace: written by an older svc, or without /proc). */
export function parsePidFile(text: string): { readonly pid: number; readonly namespace: string | undefined } {
  const [first, second] = text.trim().split("\n");
  const namespace = second?.trim();
  return { pid: Number(first?.trim()), namespace: namespace === "" ? undefined : namespace };
}
