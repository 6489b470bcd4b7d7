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
 * Whether `recorded` (a PID namespace a file recorded; `-`, empty or none: not recorded, an older svc's or
 * one without /proc) names another PID namespace than this process's, where a pid names another process or
 * none: such a pid is never judged from here.
 */
export function otherPidNamespace(recorded: string | undefined): boolean {
  const here = pidNamespace();
  return (
    recorded !== undefined && recorded !== "-" && recorded !== "" && here !== undefined && recorded !== here
  );
}

/**
 * This process's PID namespace as a file name carries it beside its pid (`ns4026531836`, for
 * `pid:[4026531836]`); undefined where it is unknown.
 */
export function pidNamespaceTag(): string | undefined {
  const digits = /^pid:\[(\d+)\]$/.exec(pidNamespace() ?? "")?.[1];
  return digits === undefined ? undefined : `ns${digits}`;
}

/** The PID namespace a file name's tag (`pidNamespaceTag`'s digits) names. */
export function pidNamespaceOfTag(digits: string): string {
  return `pid:[${digits}]`;
}
