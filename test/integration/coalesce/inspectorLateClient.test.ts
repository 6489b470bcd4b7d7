import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startInspector } from "../../../src/actors/inspector.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { silentLogger } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { onPickedPort, postJson } from "../../helpers/http.js";
import { openInspectorClient } from "../../helpers/inspectorClient.js";

/**
 * The relay replays what it kept to a client that connects late (the browser opened once the gateway
 * runs). With the last 200 events alone, a gateway that had done some work showed that client none of its
 * long-lived actors (`gateway`, `routes`, `runs`, ...), whose registrations came first: only events of
 * actors it had never heard of. The actors still running are replayed too, ended ones are not.
 */
let home: TempHome | undefined;
let gateway: Gateway | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

/** The names of the actors registered (`@xstate.actor`) in `messages`. */
const actorNames = (messages: readonly string[]) =>
  messages
    .map((m) => JSON.parse(m) as { type: string; name?: string })
    .filter((e) => e.type === "@xstate.actor")
    .map((e) => e.name);

describe("--inspect relay: a client that connects late", () => {
  it("is shown the actors still running, though their registration is older than the last 200 events", async () => {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    const early = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
    cleanups.push(() => early.socket.terminate());
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            rate_limit: 1000,
            routes: { gh: { secret: "INSECURE_NO_AUTH", coalesce: { key: "n", window_seconds: 0 } } },
          },
        },
      }),
    );
    gateway = await startGateway({
      home: home.dir,
      env: { SVC_HOME: home.dir },
      port: 0,
      logger: silentLogger(),
      inspect: bridge.inspect,
    });
    // Each event is a group actor of its own that fires at once (window 0): several events each.
    const groups = 60;
    for (let n = 1; n <= groups; n++) {
      const res = await postJson(
        `http://127.0.0.1:${gateway.port}/webhooks/gh`,
        { n },
        { "x-request-id": `late-${n}` },
      );
      expect(res.status).toBe(202);
    }
    // Every group's last snapshot (status done, in `dispatched`) has reached the early client.
    await vi.waitFor(
      () =>
        expect(
          early.messages.filter((m) => m.includes('"status":"done","tags":[],"value":"dispatched"')),
        ).toHaveLength(groups),
      { timeout: 20_000, interval: 50 },
    );
    expect(early.messages.length).toBeGreaterThan(200);
    expect(actorNames(early.messages.slice(-200))).not.toContain("gateway");
    const late = await openInspectorClient(port);
    cleanups.push(() => late.socket.terminate());
    const lastSeen = early.messages.at(-1) as string;
    await vi.waitFor(() => expect(late.messages).toContain(lastSeen), { timeout: 10_000, interval: 50 });
    const names = actorNames(late.messages);
    for (const name of ["gateway", "routes", "coalescer", "cron", "runs", "run-slot-1"])
      expect(names).toContain(name);
    // Each once; and of the groups, only those in the last 200 events (they have all ended).
    expect(names.filter((name) => name === "gateway")).toHaveLength(1);
    expect(names).not.toContain("coalesce-1:gh:1");
    // A registration comes before anything else of its actor: the root's first.
    expect(actorNames(late.messages.slice(0, 1))).toEqual(["gateway"]);
  }, 120_000);
});
