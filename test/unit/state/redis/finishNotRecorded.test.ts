import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { QueuedRun } from "../../../../src/actors/runs.js";
import type { RedisState } from "../../../../src/state/redisState.js";
import type { AcceptedEvent, ResolvedRoute } from "../../../../src/streams/context.js";
import { captureLogger } from "../../../fakes/logCapture.js";
import { pendingRun } from "../../../helpers/pendingRun.js";
import { startTestRedis, type TestRedis } from "../../../helpers/redis.js";
import { openTestRedisState } from "../../../helpers/testRedisState.js";

// A Redis of the file's own: the test freezes it.
let server: TestRedis;
beforeAll(async () => {
  server = await startTestRedis();
});
afterAll(async () => {
  server.thaw();
  await server.cleanup();
});

describe("a shared run whose end Redis did not record (state.backend: redis)", { timeout: 30_000 }, () => {
  it("is said at WARN on the instance where it ended, naming its route and delivery id and that it runs again; and it does run again", async () => {
    const started: QueuedRun[] = [];
    let goOn: () => void = () => {};
    const going = new Promise<void>((resolve) => {
      goOn = resolve;
    });
    const log = captureLogger();
    const routes: Record<string, unknown> = {
      pr: { name: "pr", profile: "default", secret: "s", route: { prompt: "p", deliver: "log" } },
    };
    // A 1 s lock (30 s by default), looked after every 0.5 s: frozen 2.5 s, Redis finds it expired.
    const stall = { lockDurationMs: 1000, stalledIntervalMs: 500 };
    const state: RedisState = await openTestRedisState(server.url, `fn${Date.now()}`, {
      logger: log.logger,
      stall,
      lookup: (name) => routes[name] as ResolvedRoute | undefined,
      async execute(run) {
        started.push(run);
        await going;
      },
    });
    const notRecorded = () => log.messages().filter((msg) => msg.includes("did not record its end"));
    try {
      await state.enqueueRun({
        ...pendingRun("d-frozen"),
        route: { prompt: "p", deliver: "log" },
        payload: {},
        headers: {},
      } as unknown as AcceptedEvent);
      state.start();
      await vi.waitFor(() => expect(started).toHaveLength(1), { timeout: 10_000, interval: 20 });
      // Frozen past the run's lock while the run goes on: its renewals wait unanswered.
      server.freeze();
      await new Promise((resolve) => setTimeout(resolve, 2500));
      server.thaw();
      goOn();
      await vi.waitFor(() => expect(notRecorded()).toHaveLength(1), { timeout: 15_000, interval: 50 });
      expect(notRecorded()[0]).toMatch(
        /^\[webhook\] pr: run of delivery d-frozen ended here, but Redis did not record its end \((Missing lock|Lock mismatch) for job j-pr%3Ad-frozen\. [^)]*\): its 1 s lock had expired first \(Redis frozen, paused or overloaded, or this instance paused, for longer than that\) or another instance had taken the run over, so the shared queue runs it again on some instance \(this one included\) — its reply may be delivered twice$/,
      );
      // As docs/durability.md says: the stall check hands it on, and it runs again (here, on the one instance).
      await vi.waitFor(() => expect(started).toHaveLength(2), { timeout: 15_000, interval: 50 });
      expect(started.map((run) => run.deliveryId)).toEqual(["d-frozen", "d-frozen"]);
    } finally {
      server.thaw();
      goOn();
      await state.stop(1000);
      await state.disconnect();
    }
    // Said once, not again for the failure BullMQ records in its place (refused alike).
    expect(notRecorded()).toHaveLength(1);
  });
});
