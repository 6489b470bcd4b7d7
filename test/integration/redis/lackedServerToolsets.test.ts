import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openRedisState, type RedisState } from "../../../src/state/redisState.js";
import type { AcceptedEvent } from "../../../src/streams/context.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { pendingRun } from "../../helpers/pendingRun.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { type ClusterNode, clusterConfig, startNode } from "../../helpers/redisCluster.js";

/**
 * `state.backend: redis` (docs/durability.md, What runs where): a run accepted under a route only the
 * accepting instance's config has runs here with that route as it was accepted. Its `toolsets` may name an
 * MCP server of that instance which this one lacks: that server offers no tools here, and the run is not
 * widened to every server this instance has (as a misspelt name in its own config would be, with the start's
 * warning). The accepting instance is played by svc's own Redis state opened beside the gateway: it stores
 * the run, as a gateway answering the request does, and runs nothing. Real Redis, a real SDK stdio server,
 * the fake model on loopback.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

let redis: TestRedis;
let model: FakeModel;
let node: ClusterNode | undefined;
let accepting: RedisState | undefined;

beforeAll(async () => {
  [redis, model] = await Promise.all([startTestRedis(), startFakeOpenAI()]);
});
afterAll(async () => {
  await node?.stop();
  await accepting?.disconnect();
  await model.close();
  await redis.cleanup();
});

describe("a run accepted under another instance's route whose toolsets name a server this instance lacks", () => {
  it("is offered no tools of this instance's servers, and the log says why; a list naming one of them still gets it", async () => {
    const prefix = `lack${randomUUID()}`;
    node = await startNode({
      ...clusterConfig(
        redis.url,
        prefix,
        { here: { prompt: "here", deliver: "log", secret: "s" } },
        { provider: "openai", model: "m", base_url: model.baseUrl, api_key: "k", retries: 0 },
      ),
      mcp_servers: { notes: { command: process.execPath, args: [SERVER] } },
    });
    const own = node;
    await vi.waitFor(
      () => expect(own.logs().some((l) => l.msg.includes("notes") && l.msg.includes("connected"))).toBe(true),
      {
        timeout: 15_000,
        interval: 20,
      },
    );

    accepting = await openRedisState({
      settings: { backend: "redis", redis_url: redis.url, redis_key_prefix: prefix } as never,
      configFile: "config.yaml",
      logger: captureLogger().logger,
      maxConcurrentRuns: 1,
      rateLimit: 1000,
      elapsed: () => 0,
      lookup: () => undefined,
      async execute() {
        throw new Error("the accepting side runs nothing here");
      },
    });
    const accepted = (deliveryId: string, toolsets: string[]) =>
      ({
        ...pendingRun(deliveryId, { routeName: "onlyA", profile: "default" }),
        prompt: `run ${deliveryId}`,
        route: { prompt: "there", deliver: "log", toolsets },
        payload: {},
        headers: {},
      }) as unknown as AcceptedEvent;

    const offered = (deliveryId: string) => {
      const request = model.requests.find((r) =>
        JSON.stringify(r.json.messages).includes(`run ${deliveryId}`),
      );
      if (request === undefined) throw new Error(`no model request for ${deliveryId} yet`);
      return ((request.json.tools ?? []) as Array<{ function: { name: string } }>).map(
        (t) => t.function.name,
      );
    };

    await accepting.enqueueRun(accepted("lacked-1", ["onlya_srv"]));
    const lacked = await vi.waitFor(() => offered("lacked-1"), { timeout: 15_000, interval: 20 });
    expect(lacked.filter((name) => name.startsWith("mcp__"))).toEqual([]);
    expect(own.logs().map((l) => l.msg)).toContain(
      '[webhook] onlyA: toolsets name "onlya_srv", no MCP server of this gateway (the route is the accepting instance\'s) — its runs here get no tools from it',
    );

    await accepting.enqueueRun(accepted("both-1", ["onlya_srv", "notes"]));
    const both = await vi.waitFor(() => offered("both-1"), { timeout: 15_000, interval: 20 });
    expect(both.some((name) => name.startsWith("mcp__notes__"))).toBe(true);
  });
});
