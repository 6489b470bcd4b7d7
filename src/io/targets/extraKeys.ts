import { nearMiss } from "../../config/nearMiss.js";
import type { PlatformName } from "../../config/sections/platforms.js";

const THREAD = ["message_thread_id", "thread_id"] as const;
const SLACK_THREAD = ["thread_ts", ...THREAD] as const;
const RECIPIENT = ["chat_id", "to"] as const;

/** The `deliver_extra` keys each target reads (docs/delivery-targets.md); any other key is never read. */
export const EXTRA_KEYS: Readonly<Record<PlatformName, readonly string[]>> = {
  telegram: ["chat_id", ...THREAD],
  discord: ["chat_id", ...THREAD],
  slack: ["chat_id", ...SLACK_THREAD],
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
  sms: [...RECIPIENT],
  email: [...RECIPIENT, "subject"],
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

interface InTurn {
  readonly keys: readonly string[];
  /** Thread keys fall back past a value that may name none; recipient keys never do. */
  readonly thread: boolean;
}

/**
 * Keys a target reads one in place of another (chat.ts: `threadOf`, `routeRecipient`): a recipient is the
 * first key set; a thread the first that names one, so a `{template}` the event leaves unfilled falls back
 * to the next key.
 */
const IN_TURN: Partial<Record<PlatformName, InTurn>> = {
  telegram: { keys: THREAD, thread: true },
  discord: { keys: THREAD, thread: true },
  matrix: { keys: THREAD, thread: true },
  mattermost: { keys: THREAD, thread: true },
  slack: { keys: SLACK_THREAD, thread: true },
  sms: { keys: RECIPIENT, thread: false },
  email: { keys: RECIPIENT, thread: false },
  home_automation: { keys: ["chat_id", "service"], thread: false },
};

/**
 * A value that always names a thread: set, not blank, no `{template}` (which may render nothing). A cron
 * job's is sent as written (`templates: false`): a value in braces is the thread it names.
 */
const namesThread = (value: string, templates: boolean): boolean => {
  const text = value.trim();
  return text !== "" && text !== "null" && !(templates && /\{[^}]*\}/.test(text));
};

/**
 * The keys of `extra` that `target` never reads because a key it reads first is set (a thread key beside one
 * that always names a thread, `to` beside `chat_id`), each with what it tells the user. `templates: false`
 * for a cron job's, whose values are sent as written.
 */
export function shadowedExtraKeys(
  target: PlatformName,
  extra: Readonly<Record<string, unknown>>,
  shownAs: string = target,
  { templates = true }: { readonly templates?: boolean } = {},
): { key: string; text: string }[] {
  const turn = IN_TURN[target];
  if (turn === undefined) return [];
  const winner = turn.keys.find((key) => {
    const value = extra[key];
    return value !== undefined && value !== null && (!turn.thread || namesThread(String(value), templates));
  });
  if (winner === undefined) return [];
  const chain = turn.keys.join(", ");
  const why = turn.thread
    ? `names a thread (the first of ${chain} that names one is used)`
    : `is set (the first of ${chain} that is set is the recipient)`;
  return turn.keys
    .slice(turn.keys.indexOf(winner) + 1)
    .filter((key) => extra[key] !== undefined && extra[key] !== null)
    .map((key) => ({
      key,
      text: `${key}: ${shownAs} does not read it while ${winner} ${why} — remove one of them`,
    }));
}
