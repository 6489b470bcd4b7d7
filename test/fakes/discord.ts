import { type FakeApi, startFakeApi } from "./httpFake.js";

/**
 * A fake Discord HTTP API (v10): `GET /users/@me` and `POST /channels/<id>/messages` with the real
 * refusals of a message body — 400 code 50006 "Cannot send an empty message" for blank content and
 * 400 code 50035 "Invalid Form Body" past 2000 characters — and 401 without `Authorization: Bot <token>`.
 */
export async function startFakeDiscord(token: string): Promise<FakeApi> {
  let nextId = 1;
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
      return { json: { id: String(nextId++), channel_id: decodeURIComponent(channel), content } };
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
