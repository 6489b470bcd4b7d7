import { afterEach, describe, expect, it, vi } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { stringify } from "yaml";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { silentLogger } from "../../../src/io/log.js";
import { appendAgent, appendedRuns } from "../../helpers/appendAgent.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { killedWithGroupPending } from "../../helpers/groupPending.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

/**
 * Under `--inspect` a coalescing group is a `coalesceGroup` actor; so is one an earlier process left in
 * the journal (killed before it fired), reopened by the next start, with its events counted so far.
 */
const idOf = (event: InspectionEvent) => (event.actorRef as AnyActorRef).id;

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

describe("--inspect: a coalescing group reopened at a start", () => {
  it("is a coalesceGroup actor with its saved count, taking the next event for its key", async () => {
    home = tempHome();
    const grouped = { secret: "INSECURE_NO_AUTH", coalesce: { key: "n", window_seconds: 3000 } };
    home.write("config.yaml", stringify(webhookConfig({ grouped }, {}, { agent: appendAgent(2) })));
    await killedWithGroupPending(home, Date.now());

    const events: InspectionEvent[] = [];
    gateway = await startGateway({
      home: home.dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home.dir, SVC_HOME: home.dir },
      port: 0,
      logger: silentLogger(),
      inspect: (event) => events.push(event),
    });
    const groupSnapshots = () =>
      events.filter((e) => e.type === "@xstate.snapshot" && idOf(e).startsWith("coalesce-"));
    await vi.waitFor(() => expect(groupSnapshots().length).toBeGreaterThan(0), { timeout: 10_000 });
    const [first] = groupSnapshots();
    expect(first && idOf(first)).toBe("coalesce-1:grouped:1");
    expect((first?.type === "@xstate.snapshot" ? first.snapshot : undefined) as unknown).toMatchObject({
      context: { merged: 2 },
      value: { pending: "quiet" },
    });

    const answer = await postJson(
      `http://127.0.0.1:${gateway.port}/webhooks/grouped`,
      { n: 1 },
      { "X-Request-ID": "later" },
    );
    expect(answer.body).toEqual({ status: "coalesced" });
    const offers = events.filter(
      (e) => e.type === "@xstate.event" && e.event.type === "offer" && idOf(e) === "coalesce-1:grouped:1",
    );
    expect(offers).toHaveLength(1);

    // The stop flushes it: one run, with the newest event, for the three.
    const stopping = gateway;
    gateway = undefined;
    await stopping.stop();
    expect(appendedRuns(home.dir).get("later")).toBe(1);
    expect(appendedRuns(home.dir).has("saved")).toBe(false);
  }, 30_000);
});
