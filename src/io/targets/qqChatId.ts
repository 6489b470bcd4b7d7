/** The chat id forms QQ takes, each kind with the id that must follow it. */
const FORMS = {
  group: "group:<group_openid>",
  user: "user:<openid>",
  channel: "channel:<channel_id>",
} as const;

/** A chat id's kind with no id after it, and the form to write instead. */
export interface QqMissingId {
  readonly kind: string;
  readonly form: string;
}

/**
 * Why `chatId` names no recipient: a kind with no id after it (`group:`, `user: `, as an unset template
 * renders), which would post to `/v2/groups//messages` (a path the platform may still answer 200);
 * undefined for any other id. The delivery refuses it, and the start warns about one written in config.yaml.
 */
export function qqMissingId(chatId: string): QqMissingId | undefined {
  const colon = chatId.indexOf(":");
  if (colon < 0 || chatId.slice(colon + 1).trim() !== "") return undefined;
  const kind = chatId.slice(0, colon);
  return Object.hasOwn(FORMS, kind) ? { kind, form: FORMS[kind as keyof typeof FORMS] } : undefined;
}

/** `has no id after "group:" — <consequence>; write group:<group_openid>`, for a chat id `qqMissingId` refuses. */
export function qqMissingIdText(missing: QqMissingId, consequence: string): string {
  return `has no id after "${missing.kind}:" — ${consequence}; write ${missing.form}`;
}
