import type { PlatformConfig } from "../../config/sections/platforms.js";
import { chatTarget, hashedPartKey, rememberGoneThread, threadOf } from "./chat.js";
import { stringField, tokenClient } from "./client.js";
import { homeChannelOf, shownRecipient, THREAD_KEYS } from "./givenRecipient.js";
import { defuseMaskedLinks } from "./maskedLinks.js";
import { DeliveryError, type DeliveryTarget, type TargetDeps } from "./target.js";

/** REST API v4 `POST /api/v4/posts`; a post's `message` holds up to 16383 characters. */
export const MATTERMOST_LIMIT = 16_383;

/**
 * `@channel`, `@all` and `@here` in a post notify every member of the channel, and Mattermost has no
 * request flag to turn that off. Payload text is untrusted, so a zero-width space goes
 * after such an `@`: Mattermost splits words there, the text reads the same and notifies no one.
 * Mattermost's parser trims `_` (with `: . -`) from both ends of a word before it looks, so `_@here` and
 * `@all_` notify too; only a letter, digit or `@` before the `@` (through underscores: `a_@all`, an
 * address `ops@all.example`) or after the word (`@all_hands`, `@channels`) makes it another word.
 */
export function defuseChannelMentions(text: string): string {
  return text.replace(/(?<![\p{L}\p{N}@]_*)@(?=(?:channel|all|here)(?!_*[\p{L}\p{N}@]))/giu, "@\u200B");
}

/**
 * Mattermost's refusal of a `root_id` it does not find in the channel (the thread's first post was deleted,
 * or it is another channel's): 400 with one of these error ids.
 */
const NO_THREAD_ROOT = new Set([
  "api.post.create_post.root_id.app_error",
  "api.post.create_post.channel_root_id.app_error",
]);

function threadRootRefused(err: unknown): boolean {
  if (!(err instanceof DeliveryError) || err.transient) return false;
  const id = (err.answer as { id?: unknown } | undefined)?.id;
  return typeof id === "string" && NO_THREAD_ROOT.has(id);
}

export function mattermostTarget(settings: PlatformConfig<"mattermost">, deps: TargetDeps): DeliveryTarget {
  const api = tokenClient("mattermost", settings);
  /** `<channel> <root>` pairs Mattermost refused: later posts go to the channel without asking again. */
  const missingRoots = new Set<string>();
  return chatTarget({
    name: "mattermost",
    sleep: deps.sleep,
    limit: MATTERMOST_LIMIT,
    // Payload text is untrusted: it notifies no channel, and a masked link in it shows as written.
    prepare: (text) => defuseMaskedLinks(defuseChannelMentions(text), "mattermost"),
    // And in each part again, as Mattermost reads that part alone: a cut through a long code span leaves the
    // rest of it no code in the next part, and a cut next to a mention takes away the letter that made it
    // another word (`a_|@all please`, `.@all|hands`).
    preparePart: (part) => defuseMaskedLinks(defuseChannelMentions(part), "mattermost"),
    markdown: true,
    ...homeChannelOf(settings),
    check: async (signal) =>
      stringField(await api.call("users/me", "GET", "/api/v4/users/me", { signal }), "username"),
    async sendPart({ chatId, text, index, message, signal, home }) {
      const thread = threadOf(message);
      const rootId = thread !== undefined && missingRoots.has(`${chatId} ${thread}`) ? undefined : thread;
      // The same on every attempt: Mattermost answers a post whose pending_post_id it created in the last
      // 30 s with that post, so a part whose answer was lost (a timeout, a 5xx after it was saved) is
      // posted once when it is sent again.
      const pendingPostId = hashedPartKey(message, index, 32);
      const post = (root: string | undefined) =>
        api.call("create post", "POST", "/api/v4/posts", {
          json: {
            channel_id: chatId,
            message: text,
            ...(root === undefined ? {} : { root_id: root }),
            pending_post_id: pendingPostId,
          },
          signal,
        });
      try {
        return await post(rootId);
      } catch (err) {
        // A thread whose first post is gone: the message goes to the channel itself rather than being lost.
        if (rootId === undefined || !threadRootRefused(err)) throw err;
        rememberGoneThread(missingRoots, `${chatId} ${rootId}`);
        deps.logger.warn(
          { route: message.route, platform: "mattermost" },
          `[delivery] mattermost: thread ${shownRecipient(rootId, message, THREAD_KEYS)} was not found in channel ${shownRecipient(chatId, message, ["chat_id"], home)} (its first post deleted, or another channel's); posting to the channel itself — fix deliver_extra.thread_id (or message_thread_id) of route "${message.route}"`,
        );
        return post(undefined);
      }
    },
  });
}
