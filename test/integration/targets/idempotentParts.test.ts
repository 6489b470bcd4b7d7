import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createdMessages, startFakeDiscord } from "../../fakes/discord.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, recordedRetries, registryFor } from "./support.js";

/**
 * A part whose answer was lost (a timeout, a 5xx from a proxy after the platform posted it) is sent again
 * in agent mode. Discord (`nonce` with `enforce_nonce: true`) and Feishu (`uuid`) de-duplicate by a key the
 * client chooses, as Matrix does by transaction id (Mattermost by `pending_post_id`, for 30 s): the same key
 * on every attempt of a part posts it once.
 */
describe("discord: a part sent again after its answer was lost is posted once", () => {
  let discord: FakeApi;
  beforeAll(async () => {
    discord = await startFakeDiscord("D", { loseAnswers: 1 });
  });
  afterAll(() => discord.close());

  it("agent mode: the retry of a posted part creates no second message", async () => {
    const registry = registryFor({ discord: { enabled: true, token: "D", base_url: discord.url } });
    const { waits, runStep } = recordedRetries();
    const text = `${"a".repeat(1500)}\n${"b".repeat(1500)}`;
    const receipt = await registry
      .get("discord")
      ?.send(message(text, { chat_id: "777" }), undefined, { runStep });
    expect(receipt?.parts).toBe(2);
    expect(waits).toEqual([1000]);
    expect(discord.requests.filter((r) => r.method === "POST")).toHaveLength(3);
    const created = createdMessages(discord).map((m) => m.content);
    expect(created).toHaveLength(2);
    expect(created.join("")).toBe(text);
  });

  it("the nonce differs between parts, deliveries and routes, and fits Discord's 25 characters", async () => {
    const registry = registryFor({ discord: { enabled: true, token: "D", base_url: discord.url } });
    const before = discord.requests.length;
    const send = (route: string, deliveryId: string) =>
      registry.get("discord")?.send(message("x", { chat_id: "777" }, { route, deliveryId }));
    await send("r1", "d1");
    await send("r1", "d2");
    await send("r2", "d1");
    const nonces = discord.requests
      .slice(before)
      .map((r) => r.json as { nonce?: unknown; enforce_nonce?: unknown });
    expect(nonces.every((n) => n.enforce_nonce === true && typeof n.nonce === "string")).toBe(true);
    expect(new Set(nonces.map((n) => n.nonce)).size).toBe(3);
    expect(nonces.every((n) => (n.nonce as string).length <= 25)).toBe(true);
    expect(createdMessages(discord).slice(-3)).toHaveLength(3);
  });
});

describe("mattermost: a part sent again after its answer was lost is posted once", () => {
  let mattermost: FakeApi;
  /** Posts created, by pending_post_id, as Mattermost keeps them for 30 s; the first answer is lost. */
  const created = new Map<string, { id: string; message: string }>();
  let loseNext = true;
  beforeAll(async () => {
    mattermost = await startFakeApi((r) => {
      const post = r.json as { message: string; pending_post_id?: string };
      const earlier = post.pending_post_id === undefined ? undefined : created.get(post.pending_post_id);
      if (earlier !== undefined) return { status: 201, json: earlier };
      const made = { id: `p${created.size + 1}`, message: post.message };
      created.set(post.pending_post_id ?? made.id, made);
      if (loseNext) {
        loseNext = false;
        return { status: 504, text: "<html><title>504 Gateway Time-out</title></html>" };
      }
      return { status: 201, json: made };
    });
  });
  afterAll(() => mattermost.close());

  it("agent mode: the retry carries the same pending_post_id and creates no second post", async () => {
    const registry = registryFor({
      mattermost: { enabled: true, token: "M", base_url: mattermost.url, home_channel: "town" },
    });
    const { waits, runStep } = recordedRetries();
    await registry.get("mattermost")?.send(message("deploy done"), undefined, { runStep });
    expect(waits).toEqual([1000]);
    expect(mattermost.requests).toHaveLength(2);
    expect([...created.values()].map((p) => p.message)).toEqual(["deploy done"]);
    await registry.get("mattermost")?.send(message("deploy done", {}, { deliveryId: "d2" }));
    expect([...created.values()].map((p) => p.message)).toEqual(["deploy done", "deploy done"]);
  });
});

describe("feishu: every attempt of a part carries the same uuid", () => {
  let feishu: FakeApi;
  beforeAll(async () => {
    feishu = await startFakeApi((r) =>
      r.path.endsWith("/tenant_access_token/internal")
        ? { json: { code: 0, msg: "ok", tenant_access_token: "t-1", expire: 7200 } }
        : { json: { code: 0, msg: "success" } },
    );
  });
  afterAll(() => feishu.close());

  it("a retried part repeats its uuid (Feishu sends one message per uuid an hour); other parts differ", async () => {
    const registry = registryFor({
      feishu: { enabled: true, app_id: "cli_1", app_secret: "S", base_url: feishu.url, home_channel: "oc_1" },
    });
    feishu.enqueue(
      { json: { code: 0, msg: "ok", tenant_access_token: "t-1", expire: 7200 } },
      { status: 502, text: "<html><title>502 Bad Gateway</title></html>" },
    );
    const { runStep } = recordedRetries();
    const text = `${"a".repeat(20_000)}\n${"b".repeat(20_000)}`;
    await registry.get("feishu")?.send(message(text), undefined, { runStep });
    const uuids = feishu.requests
      .filter((r) => r.path === "/open-apis/im/v1/messages")
      .map((r) => (r.json as { uuid?: unknown }).uuid);
    expect(uuids).toHaveLength(3);
    expect(typeof uuids[0]).toBe("string");
    expect((uuids[0] as string).length).toBeLessThanOrEqual(50);
    expect(uuids[1]).toBe(uuids[0]);
    expect(uuids[2]).not.toBe(uuids[0]);
  });
});
