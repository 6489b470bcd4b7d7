import { describe, type WrittenAs } from "../../config/describe.js";
import { nearMiss } from "../../config/nearMiss.js";
import { PLATFORM_ALIASES, PLATFORM_NAMES } from "../../config/sections/platforms.js";

/** Target names users may write in `deliver`, mapped to the canonical platform name. */
export const TARGET_ALIASES: Readonly<Record<string, string>> = {
  log: "log",
  ...Object.fromEntries(PLATFORM_NAMES.map((name) => [name, name])),
  ...PLATFORM_ALIASES,
};

export function canonicalTarget(name: string): string | undefined {
  return Object.hasOwn(TARGET_ALIASES, name) ? TARGET_ALIASES[name] : undefined;
}

/**
 * A `deliver` value as logs and listings show it: a target's name as written, a URL (a chat's incoming
 * webhook pasted into a subscription record by hand, its path a credential) by its scheme and host only.
 */
export function shownTarget(name: string): string {
  if (canonicalTarget(name) !== undefined || !name.includes("://")) return name;
  try {
    const url = new URL(name);
    return `${url.protocol}//${url.host}/…`;
  } catch {
    return `${name.slice(0, name.indexOf("://") + 3)}…`;
  }
}

/**
 * What a `deliver` that names no target is told, wherever it is written: `unknown target "slak" — did you mean
 * "slack"? use one of …`; one a `${VAR}` gave (`given`) is quoted as the file writes it, not as the value.
 */
export function unknownTargetText(name: string, given?: WrittenAs): string {
  const meant = nearMiss(name, Object.keys(TARGET_ALIASES));
  return `unknown target ${describe(given ?? shownTarget(name))} — ${meant === undefined ? "" : `did you mean "${meant}"? `}use one of ${Object.keys(TARGET_ALIASES).join(", ")}`;
}

/** True for the chat platforms (chat_1..chat_13), whose deliveries can be mirrored into sessions. */
export function isChatPlatform(name: string): boolean {
  const canonical = canonicalTarget(name);
  return (
    canonical !== undefined &&
    Object.entries(PLATFORM_ALIASES).some(([alias, to]) => alias.startsWith("chat_") && to === canonical)
  );
}
