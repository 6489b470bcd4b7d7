import { chatSessionKey, SessionStore } from "./store.js";

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
