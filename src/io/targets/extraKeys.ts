import { nearMiss } from "../../config/nearMiss.js";
import type { PlatformName } from "../../config/sections/platforms.js";

const THREAD = ["message_thread_id", "thread_id"] as const;

/** The `deliver_extra` keys each target reads (docs/delivery-targets.md); any other key is never read. */
export const EXTRA_KEYS: Readonly<Record<PlatformName, readonly string[]>> = {
  telegram: ["chat_id", ...THREAD],
  discord: ["chat_id", ...THREAD],
  slack: ["chat_id", "thread_ts", ...THREAD],
  signal: ["chat_id"],
  whatsapp: ["chat_id"],
  matrix: ["chat_id", ...THREAD],
  mattermost: ["chat_id", ...THREAD],
  dingtalk: ["chat_id"],
  feishu: ["chat_id"],
  wecom: ["chat_id"],
  weixin: ["chat_id"],
  bluebubbles: ["chat_id"],
  qqbot: ["chat_id"],
  sms: ["chat_id", "to"],
  email: ["chat_id", "to", "subject"],
  home_automation: ["chat_id", "service", "title"],
  forge_comment: ["repo", "pr_number"],
};

/**
 * The keys of `extra` that `target` (canonical; named `shownAs`, as the route writes it) never reads, each
 * with what it tells the user: a
 * misspelt `chatid` would otherwise send every message to the platform's home channel.
 */
export function unreadExtraKeys(
  target: PlatformName,
  extra: Readonly<Record<string, unknown>>,
  shownAs: string = target,
): string[] {
  const read = EXTRA_KEYS[target];
  return Object.keys(extra)
    .filter((key) => !read.includes(key))
    .map((key) => {
      const meant = nearMiss(key, read);
      return `${key}: ${shownAs} does not read it${meant === undefined ? "" : ` — did you mean ${meant}?`} (it reads ${read.join(", ")})`;
    });
}
