import { chatSessionKey, SessionStore } from "./store.js";

export interface MirrorRequest {
  readonly home: string;
  readonly profile: string | undefined;
  readonly platform: string;
  readonly chatId: string;
  readonly route: string;
  readonly text: string;
}

/** What is mirrored, wherever the chat's session is: `MirrorRequest` without the home it is written in. */
export type MirrorEntry = Omit<MirrorRequest, "home">;

/**
 * A delivery's mirror as told to the other gateway instances sharing the state (`state.backend: redis`):
 * each appends it to its own session of that chat, if it has one. `at`: when it was delivered (ISO time),
 * the time the entries are written with.
 */
export interface ToldMirror extends MirrorEntry {
  readonly at: string;
}

/** Tells the other instances a delivery's mirror. Never rejects: best-effort, as the mirror is. */
export interface MirrorShare {
  /** Whether it was told: false when Redis refused it or did not answer (a failure is logged). */
  tell(mirror: ToldMirror): Promise<boolean>;
}

export const mirrorText = (route: string, text: string) => `[Webhook delivery: ${route}]\n${text}`;

/**
 * `mirror_to_session`: appends the delivered text to the chat's transcript in the message's profile.
 * Returns false when that chat has no session (nothing is created).
 */
export async function mirrorDelivery(request: MirrorRequest, now?: () => Date): Promise<boolean> {
  const store = SessionStore.forProfile(request.home, request.profile, now);
  const key = chatSessionKey(request.platform, request.chatId);
  // Looked up before taking the index lock: the lock would create the profile's sessions/ directory
  // (and make every delivery to a chat without a session queue for it). The index is replaced
  // atomically, so this read needs no lock; `append` checks again under it. Read (and parsed, when another
  // process changed it) on the index's thread, not the gateway's.
  if ((await store.find(key)) === undefined) return false;
  return store.append(key, [
    {
      role: "assistant",
      content: mirrorText(request.route, request.text),
      source: `webhook:${request.route}`,
    },
  ]);
}
