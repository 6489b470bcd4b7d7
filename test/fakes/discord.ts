import { type FakeApi, type FakeReply, startFakeApi } from "./httpFake.js";

/**
 * A fake Discord HTTP API (v10): `GET /users/@me` and `POST /channels/<id>/messages` with the real
 * refusals of a message body — 400 code 50006 "Cannot send an empty message" for blank content and
 * 400 code 50035 "Invalid Form Body" past 2000 characters — and 401 without `Authorization: Bot <token>`.
 */
export async function startFakeDiscord(
  token: string,
  options: {
    /** Per-channel rate-limit bucket, answered in `X-RateLimit-*` headers; past it a 429 as Discord sends. */
    readonly bucket?: { readonly limit: number; readonly windowMs: number };
  } = {},
): Promise<FakeApi> {
  let nextId = 1;
  const windows = new Map<string, { start: number; used: number }>();
  /** The bucket headers of one more message to `channel`, or the 429 when the bucket is empty. */
  function spend(channel: string): { headers: Record<string, string>; limited?: FakeReply } {
    const bucket = options.bucket;
    if (bucket === undefined) return { headers: {} };
    const now = Date.now();
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
  return startFakeApi((request) => {
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
      const spent = spend(channel);
      if (spent.limited !== undefined) return spent.limited;
      return {
        headers: spent.headers,
        json: { id: String(nextId++), channel_id: decodeURIComponent(channel), content },
      };
    }
    return { status: 404, json: { message: "404: Not Found", code: 0 } };
  });
}

/** The content of every message the fake received, in order. */
export function sentContents(fake: FakeApi): string[] {
  return fake.requests
    .filter((r) => r.method === "POST" && r.path.endsWith("/messages"))
    .map((r) => (r.json as { content: string }).content);
}
