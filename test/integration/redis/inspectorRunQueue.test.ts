import { randomUUID } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startInspector } from "../../../src/actors/inspector.js";
import { systemClock } from "../../../src/clock.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { silentLogger } from "../../../src/io/log.js";
import type { RedisState } from "../../../src/state/redisState.js";
import { type FakeClock, fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome, tempPath } from "../../helpers/home.js";
import { onPickedPort, postJson } from "../../helpers/http.js";
import { type InspectorClient, openInspectorClient } from "../../helpers/inspectorClient.js";
import { redisPerFile } from "../../helpers/redisPerFile.js";
import { runEvent } from "../../helpers/runEvent.js";
import { openTestRedisState } from "../../helpers/testRedisState.js";

/**
 * docs/inspector.md, "What you see of the run queue", with state.backend: redis: the runs go through the
 * shared queue, not the process's own, so the `runs` actor shows the shared queue's counts as
 * svc_runs_waiting / svc_runs_active / svc_deliveries_retrying read them (the runs waiting for any instance,
 * those this instance runs): read again as this instance stores, starts and finishes a run, and every second
 * for the runs other instances store. A real redis-server, a real gateway under the WebSocket relay, the
 * gateway's timers on the test's clock; the other instance is svc's own Redis state opened beside it, which
 * stores runs and runs none.
 */
const shared = redisPerFile();

let home: TempHome | undefined;
let gateway: Gateway | undefined;
let other: RedisState | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await gateway?.stop();
  gateway = undefined;
  await other?.disconnect();
  other = undefined;
  home?.cleanup();
  home = undefined;
});

type Counts = { waiting: number; active: number; retrying: number };
interface Inspected {
  type: string;
  sessionId?: string;
  actorRef?: { id?: string };
  event?: { type?: string };
  snapshot?: { context?: { queue?: unknown } };
}

/** The `runs` actor's snapshots' counts, in order (each `@xstate.snapshot` whose context holds the queue). */
function queueCounts(client: InspectorClient): Counts[] {
  return client.messages
    .map((m) => JSON.parse(m) as Inspected)
    .filter((e) => e.type === "@xstate.snapshot" && e.snapshot?.context?.queue !== undefined)
    .map((e) => e.snapshot?.context?.queue as Counts);
}

const lastCounts = (client: InspectorClient) => queueCounts(client).at(-1);

/** A gateway on the file's Redis under an inspector client, one run slot, each run held until `release` exists. */
async function heldGateway(): Promise<{
  client: InspectorClient;
  clock: FakeClock;
  prefix: string;
  release: string;
  started: string;
  gateway: Gateway;
}> {
  const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
  cleanups.push(() => bridge.stop());
  const client = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
  cleanups.push(() => client.socket.terminate());
  const release = tempPath("svc-inspect-redis");
  const started = tempPath("svc-inspect-redis", ".started");
  const prefix = `insp${randomUUID()}`;
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({
      state: { backend: "redis", redis_url: shared.server.url, redis_key_prefix: prefix },
      agent: {
        provider: "command",
        command: ["sh", "-c", 'echo x >> "$1"; while [ ! -e "$0" ]; do sleep 0.05; done', release, started],
        max_concurrent_runs: 1,
      },
      platforms: {
        webhook: {
          enabled: true,
          host: "127.0.0.1",
          routes: { r: { secret: "INSECURE_NO_AUTH", prompt: "run {n}", deliver: "log" } },
        },
      },
    }),
  );
  // The gateway's timers (the counts' read every second among them) wait on the test's clock.
  const clock = fakeClock(Date.now());
  gateway = await startGateway({
    home: home.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
    port: 0,
    logger: silentLogger(),
    clock: { ...systemClock, setTimeout: clock.setTimeout, clearTimeout: clock.clearTimeout },
    drainTimeoutMs: 2000,
    inspect: bridge.inspect,
  });
  return { client, clock, prefix, release, started, gateway };
}

const runsStarted = (file: string) => {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean).length;
  } catch {
    return 0;
  }
};

describe("--inspect with state.backend: redis: the run queue", { timeout: 60_000 }, () => {
  it("is the shared queue's counts, published as this instance stores, starts and finishes runs", async () => {
    const { client, release, started, gateway } = await heldGateway();
    for (const n of [1, 2, 3]) {
      const res = await postJson(
        `http://127.0.0.1:${gateway.port}/webhooks/r`,
        { n },
        { "x-request-id": `q-${n}` },
      );
      expect(res.status).toBe(202);
    }
    // No tick of the clock: each count comes from this instance's own change.
    await vi.waitFor(() => expect(lastCounts(client)).toEqual({ waiting: 2, active: 1, retrying: 0 }), {
      timeout: 20_000,
      interval: 50,
    });
    const changed = client.messages
      .map((m) => JSON.parse(m) as Inspected)
      .filter((e) => e.type === "@xstate.event" && e.event?.type === "changed");
    expect(changed.length).toBeGreaterThan(0);

    writeFileSync(release, "");
    await vi.waitFor(
      () => {
        expect(runsStarted(started)).toBe(3);
        expect(lastCounts(client)).toEqual({ waiting: 0, active: 0, retrying: 0 });
      },
      { timeout: 20_000, interval: 50 },
    );
  });

  it("shows runs another instance stored at the next read, a second on", async () => {
    const { client, clock, prefix, release, started, gateway } = await heldGateway();
    const res = await postJson(
      `http://127.0.0.1:${gateway.port}/webhooks/r`,
      { n: 1 },
      { "x-request-id": "q-1" },
    );
    expect(res.status).toBe(202);
    await vi.waitFor(() => expect(lastCounts(client)).toEqual({ waiting: 0, active: 1, retrying: 0 }), {
      timeout: 20_000,
      interval: 50,
    });

    // Stored by another instance: nothing of this one changes, so the counts wait for the next read.
    other = await openTestRedisState(shared.server.url, prefix, {
      logger: silentLogger(),
      lookup: () => undefined,
      async execute() {
        throw new Error("the other instance runs nothing here");
      },
    });
    await other.enqueueRun(runEvent("elsewhere-1"));
    await other.enqueueRun(runEvent("elsewhere-2"));
    expect(lastCounts(client)).toEqual({ waiting: 0, active: 1, retrying: 0 });

    clock.advance(1000);
    await vi.waitFor(() => expect(lastCounts(client)).toEqual({ waiting: 2, active: 1, retrying: 0 }), {
      timeout: 20_000,
      interval: 50,
    });

    writeFileSync(release, "");
    await vi.waitFor(
      () => {
        expect(runsStarted(started)).toBe(3);
        expect(lastCounts(client)).toEqual({ waiting: 0, active: 0, retrying: 0 });
      },
      { timeout: 20_000, interval: 50 },
    );
  });
});
