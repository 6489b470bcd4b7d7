import { afterAll, beforeAll } from "vitest";
import { type FakeApi, startFakeApi } from "./httpFake.js";

/**
 * A fake Telegram Bot API: answers getMe and sendMessage like the real one (`{ok: true, result}`, and
 * 400 for a text that is empty after trimming, longer than 4096 characters or not valid UTF-8, and for
 * `message_thread_id: 1`, the General topic, which a message reaches by naming no topic, and for a
 * deleted topic; 400 "chat_id is empty" without a chat, and "can't parse entities" for a `parse_mode` text
 * whose formatting does not parse; when `token` is given, 401 "Unauthorized" for another bot token than it,
 * and 404 "Not Found" for one not shaped `<bot id>:<secret>` (`bot123:…`), as the Bot API answers those).
 * Point `platforms.telegram.base_url` at `fake.url`. Use `enqueue` to make the next call fail, e.g.
 * `{status: 400, json: {ok: false, error_code: 400, description: "Bad Request: chat not found"}}`.
 */
export async function startFakeTelegram(
  options: {
    /** Groups upgraded to supergroups (old chat id → new): sending to the old id answers as the Bot API does. */
    readonly migrated?: Readonly<Record<string, number>>;
    /** Forum topics that were deleted: a message naming one is refused as the Bot API does. */
    readonly deletedTopics?: readonly number[];
    /** The bot's token: a request with another one in its path is answered 401, as the Bot API does. */
    readonly token?: string;
    /**
     * Public chats' `@username`s and their numeric ids: a message sent to the username is answered with the
     * chat's numeric id (`result.chat.id`), as the Bot API answers it.
     */
    readonly usernames?: Readonly<Record<string, number>>;
  } = {},
): Promise<FakeApi> {
  let nextId = 1;
  return startFakeApi((request) => {
    if (options.token !== undefined && !request.path.startsWith(`/bot${options.token}/`)) {
      const sent = /^\/bot([^/]*)\//.exec(request.path)?.[1] ?? "";
      return /^\d+:[A-Za-z0-9_-]+$/.test(sent)
        ? { status: 401, json: { ok: false, error_code: 401, description: "Unauthorized" } }
        : { status: 404, json: { ok: false, error_code: 404, description: "Not Found" } };
    }
    if (request.path.endsWith("/getMe"))
      return { json: { ok: true, result: { id: 42, is_bot: true, username: "svc_test_bot" } } };
    if (request.path.endsWith("/sendMessage")) {
      const body = request.json as {
        chat_id?: unknown;
        text?: string;
        message_thread_id?: unknown;
        parse_mode?: unknown;
      };
      if (body.chat_id === undefined || body.chat_id === "")
        return badRequest("Bad Request: chat_id is empty");
      // Own keys only: a chat id such as `__proto__` or `constructor` names no migrated group.
      const id = String(body.chat_id);
      const moved =
        options.migrated !== undefined && Object.hasOwn(options.migrated, id)
          ? options.migrated[id]
          : undefined;
      if (moved !== undefined)
        return {
          status: 400,
          json: {
            ok: false,
            error_code: 400,
            description: "Bad Request: group chat was upgraded to a supergroup chat",
            parameters: { migrate_to_chat_id: moved },
          },
        };
      // The General topic of a forum is thread 1, which the Bot API refuses as a message_thread_id.
      if (body.message_thread_id === 1) return badRequest("Bad Request: message thread not found");
      if (options.deletedTopics?.includes(body.message_thread_id as number))
        return badRequest("Bad Request: message thread not found");
      // The real Bot API: text is 1-4096 characters after trimming; anything else is a 400.
      const text = (body.text ?? "").trim();
      if (!isWellFormed(text)) return badRequest("Bad Request: text must be encoded in UTF-8");
      if (text === "") return badRequest("Bad Request: message text is empty");
      if (text.length > 4096) return badRequest("Bad Request: message is too long");
      const entityError = parseEntities(text, body.parse_mode);
      if (entityError !== undefined) return badRequest(`Bad Request: can't parse entities: ${entityError}`);
      return {
        json: {
          ok: true,
          result: {
            message_id: nextId++,
            chat: {
              id:
                options.usernames !== undefined && Object.hasOwn(options.usernames, id)
                  ? options.usernames[id]
                  : body.chat_id,
            },
            text: body.text,
          },
        },
      };
    }
    return { status: 404, json: { ok: false, error_code: 404, description: "Not Found" } };
  });
}

/**
 * The Bot API's refusal of a `parse_mode` text whose formatting does not parse (a rough model of it):
 * MarkdownV2 wants every reserved character escaped, Markdown each `*`, `_` and backtick closed, HTML each
 * `<` to open a tag it knows (or be `&lt;`). Without `parse_mode` the text is taken as it is.
 */
function parseEntities(text: string, mode: unknown): string | undefined {
  if (mode === "MarkdownV2") {
    const reserved = /(?<!\\)[_*[\]()~`>#+\-=|{}.!]/.exec(text);
    return reserved === null
      ? undefined
      : `Character '${reserved[0]}' is reserved and must be escaped with the preceding '\\'`;
  }
  if (mode === "Markdown") {
    for (const mark of ["*", "_", "`"])
      if (text.split(mark).length % 2 === 0)
        return `Can't find end of the entity starting at byte offset ${Buffer.byteLength(text.slice(0, text.lastIndexOf(mark)))}`;
    return undefined;
  }
  if (mode === "HTML") {
    const tag = /<(?!\/?(?:b|strong|i|em|u|ins|s|strike|del|a|code|pre|span|tg-spoiler|blockquote)\b)/.exec(
      text,
    );
    return tag === null
      ? undefined
      : `Unsupported start tag at byte offset ${Buffer.byteLength(text.slice(0, tag.index))}`;
  }
  return undefined;
}

/** A lone surrogate (sent as a `\ud800` JSON escape) is no UTF-8 text. */
function isWellFormed(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function badRequest(description: string) {
  return { status: 400, json: { ok: false, error_code: 400, description } };
}

/** The text of every sendMessage the fake received, in order. */
export function sentTexts(fake: FakeApi): string[] {
  return fake.requests
    .filter((r) => r.path.endsWith("/sendMessage"))
    .map((r) => (r.json as { text: string }).text);
}

/** A fake Telegram Bot API for a test file: started before its tests, closed after them; read through the getter. */
export function fakeTelegramPerFile(): () => FakeApi {
  let telegram: FakeApi | undefined;
  beforeAll(async () => {
    telegram = await startFakeTelegram();
  });
  afterAll(async () => {
    await telegram?.close();
  });
  return () => {
    if (telegram === undefined) throw new Error("the fake Telegram starts before the file's tests");
    return telegram;
  };
}
