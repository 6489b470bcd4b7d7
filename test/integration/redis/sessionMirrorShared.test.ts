import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { postJson } from "../../helpers/http.js";
import {
  type ClusterNode,
  clusterConfig,
  clusterSuite,
  startNode,
  withPlatform,
} from "../../helpers/redisCluster.js";

/**
 * docs/delivery-targets.md (Session mirroring) and docs/durability.md, with state.backend: redis: two
 * gateway instances on the real redis-server, each in its own SVC_HOME, work as one gateway, so a delivery
 * is mirrored into every instance's session of its chat, whichever instance delivered it — once per home.
 * The chat is a Telegram fake on loopback.
 */
const CHAT = "-1001234";
const OPEN = "INSECURE_NO_AUTH";
const suite = clusterSuite("svc-mirror-shared-", "unused");
let tg: FakeApi;
beforeAll(async () => {
  tg = await startFakeTelegram();
});
afterAll(() => tg.close());

/** Both instances' config: `tgm` runs an agent (one run at a time each), `tgd` delivers directly. */
function config(): Record<string, unknown> {
  const routes = {
    tgm: {
      secret: OPEN,
      prompt: "event {n}",
      deliver: "telegram",
      mirror_to_session: true,
      deliver_extra: { chat_id: CHAT },
    },
    tgd: {
      secret: OPEN,
      prompt: "direct {n}",
      deliver: "telegram",
      deliver_only: true,
      mirror_to_session: true,
      deliver_extra: { chat_id: CHAT },
    },
    work: {
      secret: OPEN,
      profile: "work",
      prompt: "work {n}",
      deliver: "telegram",
      deliver_only: true,
      mirror_to_session: true,
      deliver_extra: { chat_id: CHAT },
    },
  };
  // A run takes a moment, so the shared queue hands the events to both instances.
  const agent = { provider: "command", command: ["sh", "-c", "sleep 0.2; cat"], max_concurrent_runs: 1 };
  const base = clusterConfig(suite.redis.url, `mirror${randomUUID()}`, routes, agent);
  return withPlatform(base, "telegram", { enabled: true, token: "1:mirror", base_url: tg.url });
}

async function twoInstances(): Promise<[ClusterNode, ClusterNode]> {
  const cfg = config();
  const files = { "profiles/work/.keep": "" };
  const a = await startNode(cfg, { files });
  suite.nodes.push(a);
  const b = await startNode(cfg, { files });
  suite.nodes.push(b);
  return [a, b];
}

const post = (node: ClusterNode, route: string, n: string) =>
  postJson(node.url(`/webhooks/${route}`), JSON.stringify({ n }), { "X-Request-Id": `${route}-${n}` });

const contents = (store: SessionStore) => store.entries(`telegram:${CHAT}`).map((entry) => entry.content);

const deliveredBy = (node: ClusterNode, route: string) =>
  node.logs().filter((line) => line.msg === `[delivery] telegram: delivered for route ${route}`).length;

describe("state.backend: redis — mirror_to_session across instances", { timeout: 60_000 }, () => {
  it("mirrors the deliveries the instance without the chat's session made into the other's session, each once", async () => {
    const [a, b] = await twoInstances();
    const sessionA = SessionStore.forProfile(a.home.dir, undefined);
    await sessionA.openChat("telegram", CHAT);
    const sent = sentTexts(tg).length;
    const events = ["1", "2", "3", "4", "5", "6"];
    for (const n of events) expect((await post(a, "tgm", n)).status).toBe(202);

    await vi.waitFor(() => expect(sentTexts(tg).length - sent).toBe(6), { timeout: 20_000, interval: 20 });
    await vi.waitFor(() => expect(contents(sessionA)).toHaveLength(6), { timeout: 10_000, interval: 20 });
    // Both instances delivered (the shared queue gave instance B its share), B without a session of the chat.
    expect(deliveredBy(a, "tgm") + deliveredBy(b, "tgm")).toBe(6);
    expect(deliveredBy(b, "tgm")).toBeGreaterThan(0);

    // Once stopped, everything either instance was told is written: still each delivery exactly once.
    await Promise.all([a.gateway.stop(), b.gateway.stop()]);
    expect(contents(sessionA).sort()).toEqual(events.map((n) => `[Webhook delivery: tgm]\nevent ${n}`));
    // B, which has no session of the chat, made none.
    expect(existsSync(join(b.home.dir, "sessions", "index.json"))).toBe(false);
  });

  it("writes a direct delivery into the session of each instance that has one, once each, dated alike", async () => {
    const [a, b] = await twoInstances();
    const sessionA = SessionStore.forProfile(a.home.dir, undefined);
    const sessionB = SessionStore.forProfile(b.home.dir, undefined);
    await sessionA.openChat("telegram", CHAT);
    await sessionB.openChat("telegram", CHAT);
    expect((await post(b, "tgd", "7")).status).toBe(200);

    await vi.waitFor(() => expect(contents(sessionA)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await Promise.all([a.gateway.stop(), b.gateway.stop()]);
    expect(contents(sessionA)).toEqual(["[Webhook delivery: tgd]\ndirect 7"]);
    expect(contents(sessionB)).toEqual(["[Webhook delivery: tgd]\ndirect 7"]);
    const [entryA] = sessionA.entries(`telegram:${CHAT}`);
    const [entryB] = sessionB.entries(`telegram:${CHAT}`);
    expect(entryA?.at).toBe(entryB?.at);
  });

  it("on a profile's route, writes into that profile's session on the other instance only", async () => {
    const [a, b] = await twoInstances();
    const defaultA = SessionStore.forProfile(a.home.dir, undefined);
    const workA = SessionStore.forProfile(a.home.dir, "work");
    await defaultA.openChat("telegram", CHAT);
    await workA.openChat("telegram", CHAT);
    expect((await post(b, "work", "8")).status).toBe(200);

    await vi.waitFor(() => expect(contents(workA)).toHaveLength(1), { timeout: 10_000, interval: 20 });
    await Promise.all([a.gateway.stop(), b.gateway.stop()]);
    expect(contents(workA)).toEqual(["[Webhook delivery: work]\nwork 8"]);
    expect(contents(defaultA)).toEqual([]);
  });
});
