import { type FakeApi, type FakeReply, startFakeApi } from "./httpFake.js";

/**
 * A fake Discord HTTP API (v10): `GET /users/@me` and `POST /channels/<id>/messages` with the real
 * refusals of a message body — 400 code 50006 "Cannot send an empty message" for blank content and
 * 400 code 50035 "Invalid Form Body" past 2000 characters — and 401 without `Authorization: Bot <token>`.
 * A message sent with `enforce_nonce: true` and a nonce it already created a message for is not created
 * again: the first one is returned, as Discord does; a nonce over 25 characters is refused (50035). The
 * created message says whom it pinged as Discord's does (`mention_everyone`, `mentions`, `mention_roles`),
 * by the request's `allowed_mentions`: without one, every mention in the content pings.
 */
export async function startFakeDiscord(
  token: string,
  options: {
    /** Per-channel rate-limit bucket, answered in `X-RateLimit-*` headers; past it a 429 as Discord sends. */
    readonly bucket?: {
      readonly limit: number;
      readonly windowMs: number;
      /** The clock the windows run on (a test's fake one); Date.now by default. */
      readonly now?: () => number;
    };
    /**
     * Lose the answer to the first N messages created: each is posted, then answered 502 as a proxy whose
     * upstream timed out does, so the client cannot tell it was posted.
     */
    readonly loseAnswers?: number;
  } = {},
): Promise<FakeApi> {
  let nextId = 1;
  let answersToLose = options.loseAnswers ?? 0;
  /** Messages created, by the nonce they were sent with under `enforce_nonce: true`, as Discord keeps them. */
  const byNonce = new Map<string, CreatedMessage>();
  const windows = new Map<string, { start: number; used: number }>();
  /** The bucket headers of one more message to `channel`, or the 429 when the bucket is empty. */
  function spend(channel: string): { headers: Record<string, string>; limited?: FakeReply } {
    const bucket = options.bucket;
    if (bucket === undefined) return { headers: {} };
    const now = (bucket.now ?? Date.now)();
    let window = windows.get(channel);
    if (window === undefined || now - window.start >= bucket.windowMs) {
      window = { start: now, used: 0 };
      windows.set(channel, window);
    }
    const resetAfter = ((window.start + bucket.windowMs - now) / 1000).toFixed(3);
    if (window.used >= bucket.limit) {
      return {
        headers: {},
        limited: {
          status: 429,
          headers: { "retry-after": String(Math.ceil(Number(resetAfter))), "x-ratelimit-scope": "user" },
          json: { message: "You are being rate limited.", retry_after: Number(resetAfter), global: false },
        },
      };
    }
    window.used += 1;
    return {
      headers: {
        "x-ratelimit-limit": String(bucket.limit),
        "x-ratelimit-remaining": String(bucket.limit - window.used),
        "x-ratelimit-reset-after": resetAfter,
        "x-ratelimit-bucket": "fake-bucket",
      },
    };
  }
  const fake: FakeApi = await startFakeApi((request) => {
    if (request.headers.authorization !== `Bot ${token}`)
      return { status: 401, json: { message: "401: Unauthorized", code: 0 } };
    if (request.method === "GET" && request.path === "/api/v10/users/@me")
      return { json: { id: "9", username: "svc-bot" } };
    const channel = /^\/api\/v10\/channels\/([^/]+)\/messages$/.exec(request.path)?.[1];
    if (request.method === "POST" && channel !== undefined) {
      const content = String((request.json as { content?: unknown } | undefined)?.content ?? "");
      if (content.trim() === "")
        return { status: 400, json: { message: "Cannot send an empty message", code: 50006 } };
      if ([...content].length > 2000)
        return {
          status: 400,
          json: {
            message: "Invalid Form Body",
            code: 50035,
            errors: {
              content: {
                _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }],
              },
            },
          },
        };
      const { nonce, enforce_nonce, allowed_mentions } = request.json as {
        nonce?: unknown;
        enforce_nonce?: unknown;
        allowed_mentions?: { parse?: string[]; users?: string[]; roles?: string[] };
      };
      if (typeof nonce === "string" && nonce.length > 25)
        return {
          status: 400,
          json: {
            message: "Invalid Form Body",
            code: 50035,
            errors: {
              nonce: {
                _errors: [{ code: "BASE_TYPE_BAD_LENGTH", message: "Must be between 1 and 25 in length." }],
              },
            },
          },
        };
      const spent = spend(channel);
      if (spent.limited !== undefined) return spent.limited;
      // enforce_nonce: a second message of the bot with the same nonce is not created; the first is returned.
      const key = enforce_nonce === true && nonce !== undefined ? String(nonce) : undefined;
      const earlier = key === undefined ? undefined : byNonce.get(key);
      if (earlier !== undefined) return { headers: spent.headers, json: earlier };
      const created = {
        id: String(nextId++),
        channel_id: decodeURIComponent(channel),
        content,
        ...pinged(content, allowed_mentions),
      };
      createdByFake.get(fake)?.push(created);
      if (key !== undefined) byNonce.set(key, created);
      if (answersToLose > 0) {
        answersToLose -= 1;
        return { status: 502, text: "<html><title>502 Bad Gateway</title></html>" };
      }
      return { headers: spent.headers, json: created };
    }
    return { status: 404, json: { message: "404: Not Found", code: 0 } };
  });
  createdByFake.set(fake, []);
  return fake;
}

/**
 * Whom a message pings, as Discord reads its content (`@everyone`/`@here`, `<@id>`/`<@!id>`, `<@&id>`) under
 * `allowed_mentions` (https://discord.com/developers/docs/resources/message#allowed-mentions-object).
 */
function pinged(
  content: string,
  allowed: { parse?: string[]; users?: string[]; roles?: string[] } | undefined,
): { mention_everyone: boolean; mentions: { id: string }[]; mention_roles: string[] } {
  const parse = allowed === undefined ? ["everyone", "users", "roles"] : (allowed.parse ?? []);
  const users = [...content.matchAll(/<@!?(\d+)>/g)].map((m) => m[1] ?? "");
  const roles = [...content.matchAll(/<@&(\d+)>/g)].map((m) => m[1] ?? "");
  return {
    mention_everyone: parse.includes("everyone") && /@(?:everyone|here)/.test(content),
    mentions: users
      .filter((id) => parse.includes("users") || (allowed?.users ?? []).includes(id))
      .map((id) => ({ id })),
    mention_roles: roles.filter((id) => parse.includes("roles") || (allowed?.roles ?? []).includes(id)),
  };
}

/** A message the fake created, as Discord answers it (the fields svc's tests read). */
export interface CreatedMessage {
  readonly id: string;
  readonly channel_id: string;
  readonly content: string;
  readonly mention_everyone: boolean;
  readonly mentions: readonly { id: string }[];
  readonly mention_roles: readonly string[];
}

const createdByFake = new WeakMap<FakeApi, CreatedMessage[]>();

/** The messages the fake created (a channel's history), in order: a request it de-duplicated adds none. */
export function createdMessages(fake: FakeApi): readonly CreatedMessage[] {
  return createdByFake.get(fake) ?? [];
}

/** The content of every message the fake received, in order. */
export function sentContents(fake: FakeApi): string[] {
  return fake.requests
    .filter((r) => r.method === "POST" && r.path.endsWith("/messages"))
    .map((r) => (r.json as { content: string }).content);
}
