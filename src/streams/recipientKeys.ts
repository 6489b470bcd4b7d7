/**
 * The `deliver_extra` keys that name where a message goes (a chat, a number, a service, a thread, a pull
 * request). No recipient holds a `$` before a placeholder, so `${NAME}` there is a variable of `.env` that
 * nothing set, never a payload's value.
 */
export const RECIPIENT_KEYS: readonly string[] = [
  "chat_id",
  "to",
  "service",
  "message_thread_id",
  "thread_id",
  "thread_ts",
  "repo",
  "pr_number",
];
