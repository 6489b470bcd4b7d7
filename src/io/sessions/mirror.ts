import { join } from "node:path";
import { chatSessionKey, fileSegment, runSessionKey, SessionStore } from "./store.js";

export interface MirrorRequest {
  readonly home: string;
  readonly profile: string | undefined;
  readonly platform: string;
  readonly chatId: string;
  readonly route: string;
  readonly text: string;
}

export const mirrorText = (route: string, text: string) => `[Webhook delivery: ${route}]\n${text}`;

/**
 * `mirror_to_session`: appends the delivered text to the chat's transcript in the message's profile.
 * Returns false when that chat has no session (nothing is created).
 */
export function mirrorDelivery(request: MirrorRequest, now?: () => Date): Promise<boolean> {
  const store = SessionStore.forProfile(request.home, request.profile, now);
  return store.append(chatSessionKey(request.platform, request.chatId), [
    {
      role: "assistant",
      content: mirrorText(request.route, request.text),
      source: `webhook:${request.route}`,
    },
  ]);
}

export interface WebhookRunRecord {
  readonly home: string;
  readonly profile: string | undefined;
  readonly route: string;
  readonly deliveryId: string;
  readonly prompt: string;
  readonly reply: string;
}

/** Records an agent run started by a webhook as its own session `webhook:<route>:<delivery_id>`. */
export async function recordWebhookRun(run: WebhookRunRecord, now?: () => Date): Promise<string> {
  const store = SessionStore.forProfile(run.home, run.profile, now);
  const key = runSessionKey(run.route, run.deliveryId);
  const file = join("webhook", fileSegment(run.route), `${fileSegment(run.deliveryId)}.jsonl`);
  await store.open(key, file, { route: run.route, delivery_id: run.deliveryId });
  await store.append(key, [
    { role: "user", content: run.prompt },
    { role: "assistant", content: run.reply },
  ]);
  return key;
}
