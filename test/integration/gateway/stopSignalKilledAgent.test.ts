import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { gatewayPerTest, inHome, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { pidInFile, signalProcess } from "../../helpers/process.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { journalLines } from "../../helpers/runJournal.js";

/**
 * A stop signal sent to the whole unit (systemd's default KillMode=control-group) reaches the agent
 * commands with the gateway's: an agent that died of it just before or after the gateway's stop began was
 * journaled as a failed run and never ran again. One ended by SIGTERM/SIGINT/SIGQUIT within 1 s of the
 * stop is now kept and runs again at the next start; one ended so with no stop near still fails.
 */

const OPEN = "INSECURE_NO_AUTH";
// While `hold` exists: note the pid and wait (killed by the test); else append the delivery id to runs.log.
const AGENT = `if [ -e "$0/hold" ]; then echo $$ > "$0/agent.pid"; exec sleep 30; fi; printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`;
// The same, but a shell that traps TERM and exits 143 (128 + SIGTERM), as a script that cleans up does.
const TRAPPING_AGENT = `if [ -e "$0/hold" ]; then trap 'exit 143' TERM; echo $$ > "$0/agent.pid"; sleep 30 & wait $!; fi; printf "%s\\n" "$SVC_DELIVERY_ID" >> "$0/runs.log"`;

const gateways = gatewayPerTest();
let agentPidFile: string | undefined;
// Registered after the gateways' own: run before them (afterEach runs last-registered first), so a held
// agent a failed test left is gone before its gateway's stop would wait for it.
afterEach(() => {
  if (agentPidFile !== undefined && existsSync(agentPidFile))
    signalProcess(Number(readFileSync(agentPidFile, "utf8")), "SIGKILL");
  agentPidFile = undefined;
});

async function startHeld(
  script = AGENT,
  state: Record<string, unknown> = {},
): Promise<{ gw: TestGateway; agent: number }> {
  const gw = await gateways.start({
    config: webhookConfig(
      { pr: { secret: OPEN } },
      {},
      { agent: { provider: "command", command: ["sh", "-c", script, inHome("")] }, ...state },
    ),
    fakeTimers: true,
    files: { hold: "" },
  });
  expect((await postJson(gw.url("/webhooks/pr"), {}, { "X-Request-ID": "d1" })).status).toBe(202);
  agentPidFile = join(gw.home.dir, "agent.pid");
  return { gw, agent: await pidInFile(agentPidFile) };
}

/** Released (no `hold`) and started again in its home: the kept run d1 runs once more. */
async function runsAgainAfterRestart(gw: TestGateway): Promise<void> {
  rmSync(join(gw.home.dir, "hold"));
  rmSync(join(gw.home.dir, "agent.pid"));
  await gateways.restart(gw);
  await vi.waitFor(() => expect(readFileSync(join(gw.home.dir, "runs.log"), "utf8")).toBe("d1\n"), {
    timeout: 10_000,
    interval: 20,
  });
}

const failedLines = (gw: TestGateway) => gw.logs().filter((line) => line.msg.includes("agent run failed"));

/** The run waits 1 s on the gateway's clock for a stop; moved on with none, it fails (one failure line). */
async function failsWithNoStop(gw: TestGateway): Promise<void> {
  await vi.waitFor(
    () => {
      gw.clock.advance(1000);
      expect(failedLines(gw)).toHaveLength(1);
    },
    { timeout: 5000, interval: 20 },
  );
}

describe("an agent command ended by the gateway's stop signal", { timeout: 20_000 }, () => {
  it("dying just before the stop begins keeps its run, which runs again after the restart", async () => {
    const { gw, agent } = await startHeld();
    // The agent gets the signal first; the gateway's stop begins a moment later (fake time: none passed).
    signalProcess(agent, "SIGTERM");
    await vi.waitFor(() => expect(existsSync(`/proc/${agent}`)).toBe(false), { timeout: 5000, interval: 10 });
    await gw.gateway.stop();
    expect(failedLines(gw)).toEqual([]);
    expect(journalLines(gw.home.dir)).toEqual([]);
    expect(gw.logs().map((line) => line.msg)).toContain(
      "[webhook] pr: the agent command was ended by the gateway's stop signal — the run is kept and runs again at the next start",
    );
    await runsAgainAfterRestart(gw);
  });

  it("dying of SIGTERM with no stop within 1 s is a failed run, as before", async () => {
    const { gw, agent } = await startHeld();
    signalProcess(agent, "SIGTERM");
    await failsWithNoStop(gw);
    expect(failedLines(gw)[0]?.err).toMatch(/^agent command was killed by SIGTERM/);
    expect(journalLines<{ delivery_id: string; error: string }>(gw.home.dir)).toMatchObject([
      { delivery_id: "d1", error: expect.stringMatching(/killed by SIGTERM/) },
    ]);
  });

  it("a shell that traps the signal and exits 143 just before the stop keeps its run too", async () => {
    const { gw, agent } = await startHeld(TRAPPING_AGENT);
    signalProcess(agent, "SIGTERM");
    await vi.waitFor(() => expect(existsSync(`/proc/${agent}`)).toBe(false), { timeout: 5000, interval: 10 });
    await gw.gateway.stop();
    expect(failedLines(gw)).toEqual([]);
    expect(journalLines(gw.home.dir)).toEqual([]);
    await runsAgainAfterRestart(gw);
  });

  it("an exit 143 with no stop within 1 s is a failed run", async () => {
    const { gw, agent } = await startHeld(TRAPPING_AGENT);
    signalProcess(agent, "SIGTERM");
    await failsWithNoStop(gw);
    expect(failedLines(gw)[0]?.err).toMatch(/^agent command exited with code 143/);
    expect(journalLines<{ delivery_id: string }>(gw.home.dir)).toMatchObject([{ delivery_id: "d1" }]);
  });

  describe("with state.backend: redis", () => {
    let redis: TestRedis | undefined;
    afterAll(() => redis?.cleanup());

    it("dying just before the stop keeps its run in Redis, which runs again after the restart", async () => {
      redis = await startTestRedis();
      const state = { state: { backend: "redis", redis_url: redis.url, redis_key_prefix: "stopsignal" } };
      const { gw, agent } = await startHeld(AGENT, state);
      signalProcess(agent, "SIGTERM");
      await vi.waitFor(() => expect(existsSync(`/proc/${agent}`)).toBe(false), {
        timeout: 5000,
        interval: 10,
      });
      await gw.gateway.stop();
      expect(failedLines(gw)).toEqual([]);
      expect(gw.logs().map((line) => line.msg)).toContain(
        "[webhook] pr: the agent command was ended by the gateway's stop signal — the run is kept in Redis and runs again on some instance (this one after its restart)",
      );
      await runsAgainAfterRestart(gw);
    });
  });
});
