import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * A room alias is resolved at its first message and kept: a gateway runs for days, in which an alias can
 * move to another room (a room upgrade moves it to the new room and closes the old one to the bot). The
 * kept room ID is dropped when the room refuses a message, and the alias is asked again.
 */
let fake: FakeApi;
beforeAll(async () => {
  fake = await startFakeApi(() => ({ json: {} }));
});
afterAll(() => fake.close());

const FORBIDDEN = {
  status: 403,
  json: { errcode: "M_FORBIDDEN", error: "You don't have permission to post that to the room." },
};

/** The homeserver: `aliases` says where each alias points now; `closed` rooms refuse messages. */
function homeserver(aliases: Map<string, string>, closed: Set<string>) {
  fake.requests.length = 0;
  fake.setHandler((r) => {
    if (r.method === "GET") {
      const alias = decodeURIComponent(r.path.split("/").at(-1) ?? "");
      const room = aliases.get(alias);
      return room === undefined
        ? { status: 404, json: { errcode: "M_NOT_FOUND", error: "Room alias not found" } }
        : { json: { room_id: room, servers: ["example.org"] } };
    }
    const room = decodeURIComponent(r.path.split("/")[5] ?? "");
    return closed.has(room) ? FORBIDDEN : { json: { event_id: "$1" } };
  });
}

const requests = () =>
  fake.requests.map((r) =>
    r.method === "GET" ? "GET" : `PUT ${decodeURIComponent(r.path.split("/")[5] ?? "")}`,
  );

describe("a Matrix room alias over a long life", () => {
  const target = () =>
    registryFor({ matrix: { enabled: true, token: "syt_x", base_url: fake.url } }).get("matrix");

  it("moved to another room (a room upgrade): the message the old room refuses goes to the room the alias names now", async () => {
    const aliases = new Map([["#ops:example.org", "!old:example.org"]]);
    const closed = new Set<string>();
    homeserver(aliases, closed);
    const matrix = target();
    await matrix?.send(message("one", { chat_id: "#ops:example.org" }));
    aliases.set("#ops:example.org", "!new:example.org");
    closed.add("!old:example.org");
    await matrix?.send(message("two", { chat_id: "#ops:example.org" }, { deliveryId: "d2" }));
    await matrix?.send(message("three", { chat_id: "#ops:example.org" }, { deliveryId: "d3" }));
    expect(requests()).toEqual([
      "GET",
      "PUT !old:example.org",
      "PUT !old:example.org",
      "GET",
      "PUT !new:example.org",
      "PUT !new:example.org",
    ]);
  });

  it("a room that refuses the bot while the alias still names it fails as before, the alias asked once more", async () => {
    const aliases = new Map([["#ops:example.org", "!old:example.org"]]);
    const closed = new Set<string>();
    homeserver(aliases, closed);
    const matrix = target();
    await matrix?.send(message("one", { chat_id: "#ops:example.org" }));
    closed.add("!old:example.org");
    await expect(
      matrix?.send(message("two", { chat_id: "#ops:example.org" }, { deliveryId: "d2" })),
    ).rejects.toThrow(/HTTP 403 .* check chat #ops:example\.org, from deliver_extra\.chat_id/);
    // Just resolved: a refusal is the room's, not asked again.
    aliases.set("#dev:example.org", "!old:example.org");
    await expect(
      matrix?.send(message("three", { chat_id: "#dev:example.org" }, { deliveryId: "d3" })),
    ).rejects.toThrow(/HTTP 403/);
    expect(requests()).toEqual([
      "GET",
      "PUT !old:example.org",
      "PUT !old:example.org",
      "GET",
      "GET",
      "PUT !old:example.org",
    ]);
  });

  it("keeps a bounded number of aliases: one of thousands delivered to is asked again, not kept for ever", async () => {
    const aliases = new Map(
      Array.from({ length: 300 }, (_, i) => [`#team-${i}:example.org`, `!r${i}:example.org`]),
    );
    homeserver(aliases, new Set());
    const matrix = target();
    for (let i = 0; i < 300; i++)
      await matrix?.send(message("hi", { chat_id: `#team-${i}:example.org` }, { deliveryId: `d${i}` }));
    fake.requests.length = 0;
    await matrix?.send(message("again", { chat_id: "#team-0:example.org" }, { deliveryId: "again" }));
    expect(requests()).toEqual(["GET", "PUT !r0:example.org"]);
  });
});
