import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { segmentName } from "../../../src/io/state/journal/segments.js";
import { stateDir } from "../../../src/state/gatewayState.js";
import { LocalStateStore } from "../../../src/state/localStore.js";
import { appendAgent, appendedRuns } from "../../helpers/appendAgent.js";
import { fakeClock, startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { type Foreground, killIfRunning, runForeground } from "../cli/svc.js";

/**
 * docs/durability.md, "Which segments are this journal's": a gateway killed with a coalescing group open,
 * and another SVC_HOME's segment copied to the next segment's name (a restore, a sync tool). The next start
 * took that segment's snapshot, the last complete one, for this journal's state: nothing replayed, the
 * group never reopened, its event never run, nothing said, and this journal's segment removed.
 */

const homes: TempHome[] = [];
const gateways: Foreground[] = [];
const restarted: Gateway[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await killIfRunning(gateway);
  for (const gateway of restarted.splice(0)) await gateway.stop();
  for (const home of homes.splice(0)) home.cleanup();
});

function newHome(): TempHome {
  const home = tempHome();
  homes.push(home);
  return home;
}

/** Another home's journal, written by its own store (one delivery id it remembers): its first segment. */
async function otherHomesSegment(): Promise<string> {
  const dir = stateDir(newHome().dir);
  const store = new LocalStateStore({ dir, now: Date.now });
  store.remember("t:OTHER-1", Date.now());
  await store.durable();
  await store.close();
  return join(dir, segmentName(1));
}

describe("another home's segment at this journal's next segment's name after a kill", {
  timeout: 60_000,
}, () => {
  it("is set aside and named at the next start; the coalesced group is reopened and runs its event", async () => {
    const home = newHome();
    const route = { secret: "INSECURE_NO_AUTH", coalesce: { key: "x", window_seconds: 600 } };
    home.write("config.yaml", stringify(webhookConfig({ t: route }, {}, { agent: appendAgent(2) })));
    const first = await runForeground(home);
    gateways.push(first);
    const answer = await postJson(
      `http://127.0.0.1:${first.port}/webhooks/t`,
      { x: 7 },
      { "X-GitHub-Delivery": "E1" },
    );
    expect(answer.body).toEqual({ status: "coalesced" });
    expect(signalProcess(first.child.pid as number, "SIGKILL")).toBe(true);
    await first.exited;

    const state = stateDir(home.dir);
    const stray = join(state, segmentName(2));
    copyFileSync(await otherHomesSegment(), stray);

    // The restart's timers on a clock the test moves: the group's 600 s window passes at once.
    const clock = fakeClock(Date.now());
    const gateway = await startGatewayInHome(home, 300, clock.now, clock);
    restarted.push(gateway);
    // The restart's lines (JSON), after the first gateway's (text).
    const messages = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    const warned = messages.find((msg) => msg.startsWith(`[state] ${stray}: is not this journal's`));
    expect(warned).toContain("its snapshot names another journal");
    expect(warned).toContain(`it is set aside as ${segmentName(2)}.foreign-`);
    expect(messages).toContain(`[state] journal ${state}: 1 record(s) replayed from 2 segment(s)`);
    clock.advance(600_000);
    await vi.waitFor(() => expect(appendedRuns(home.dir).get("E1")).toBe(1), {
      timeout: 15_000,
      interval: 20,
    });
    expect(readdirSync(state).filter((name) => name.startsWith(`${segmentName(2)}.foreign-`))).toHaveLength(
      1,
    );
  });
});
