import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { historyDir, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import {
  inHome,
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  startGatewayInHome,
  webhookConfig,
} from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { liveOnDisk } from "../state/killHelpers.js";

const SECRET = "pending-runs-route-secret";
const PENDING = "webhook-pending-runs.json";

/** An agent that marks its run as started, then never finishes on its own. */
const STUCK_AGENT = {
  provider: "command",
  command: ["bash", "-c", 'touch "$0/started-$SVC_DELIVERY_ID"; exec sleep 30', inHome("")],
  max_concurrent_runs: 1,
};

/**
 * An agent that marks its run as started and waits; on SIGTERM (a stop past the drain timeout) it prints a
 * reply, marks that it did, and exits 0, as an agent that answers with what it has when told to stop.
 */
const ANSWERS_SIGTERM_AGENT = {
  provider: "command",
  command: [
    "bash",
    "-c",
    'trap \'echo "reply-given-on-sigterm"; touch "$0/replied-$SVC_DELIVERY_ID"; exit 0\' TERM; touch "$0/started-$SVC_DELIVERY_ID"; sleep 30 & wait',
    inHome(""),
  ],
  max_concurrent_runs: 1,
};

function config(
  agent: Record<string, unknown>,
  routes: Record<string, unknown> = { pr: { secret: SECRET, prompt: "PR {number}" } },
) {
  return stringify(webhookConfig(routes, {}, { agent }));
}

function readLog(home: TempHome): Array<{ msg: string; level: number }> {
  const file = join(home.dir, "logs", "gateway.log");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { msg: string; level: number });
}

const start = startGatewayInHome;

/** The outcomes of the agent runs of delivery `id` in the delivery history (`svc webhook deliveries`'s RUN). */
function historyRuns(home: TempHome, id: string): string[] {
  return readHistory(historyDir(home.dir)).flatMap((r) =>
    r.kind === "run" && r.id === id ? [r.outcome] : [],
  );
}

async function send(gateway: Gateway, id: string, number: number) {
  const body = JSON.stringify({ number });
  return postJson(`http://127.0.0.1:${gateway.port}/webhooks/pr`, body, {
    "X-GitHub-Event": "pull_request",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
}

describe("agent runs unfinished at shutdown are saved and run at the next start", { timeout: 20_000 }, () => {
  const homes: TempHome[] = [];
  const running: Gateway[] = [];
  afterEach(async () => {
    for (const gateway of running.splice(0)) await gateway.stop();
    for (const home of homes.splice(0)) home.cleanup();
  });
  const newHome = () => {
    const home = tempHome();
    homes.push(home);
    return home;
  };

  it("saves the running and the waiting runs (0600, no route secret), then runs each once after a restart", async () => {
    const home = newHome();
    home.write("config.yaml", config(STUCK_AGENT));
    const first = await start(home);
    for (const [i, id] of ["d1", "d2", "d3"].entries()) {
      expect(await send(first, id, i + 1)).toMatchObject({
        status: 202,
        body: { status: "accepted", delivery_id: id },
      });
    }
    await vi.waitFor(() => expect(existsSync(join(home.dir, "started-d1"))).toBe(true), { timeout: 10_000 });
    await first.stop();

    const file = join(home.dir, PENDING);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain(SECRET);
    const saved = JSON.parse(text) as { version: number; runs: Array<Record<string, unknown>> };
    expect(saved.version).toBe(1);
    expect(saved.runs.map((run) => [run.deliveryId, run.prompt, run.routeName])).toEqual([
      ["d1", "PR 1", "pr"],
      ["d2", "PR 2", "pr"],
      ["d3", "PR 3", "pr"],
    ]);
    // One summary line for the whole backlog, not one per run.
    expect(
      readLog(home)
        .filter((line) => line.msg.includes("saved to"))
        .map((line) => line.msg),
    ).toEqual([
      `[webhook] 3 agent run(s) not finished at shutdown — saved to ${file}, they run at the next start (pr: 3)`,
    ]);
    // Only the first run ever started.
    expect(readdirSync(home.dir).filter((name) => name.startsWith("started-"))).toEqual(["started-d1"]);
    // The run the stop ended did not fail (it runs again): the history shows none, so no one redelivers it.
    expect(historyRuns(home, "d1")).toEqual([]);

    home.write("config.yaml", config(recorderAgent()));
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    const second = await start(home);
    running.push(second);
    for (const [i, id] of ["d1", "d2", "d3"].entries()) {
      await vi.waitFor(
        () =>
          expect(readRun(home, id)).toMatchObject({
            prompt: `PR ${i + 1}`,
            route: "pr",
            event: "pull_request",
          }),
        {
          timeout: 10_000,
        },
      );
    }
    expect(existsSync(file)).toBe(false);
    expect(
      readLog(home).some((line) =>
        line.msg.includes("3 agent run(s) left unfinished at the last shutdown queued again"),
      ),
    ).toBe(true);
    await vi.waitFor(() => expect(historyRuns(home, "d1")).toEqual(["ok"]), { timeout: 10_000 });
  });

  it("a run still going when the drain ends is stopped before it is saved: the reply its agent gives on SIGTERM is not delivered, and it runs once at the next start", async () => {
    const home = newHome();
    home.write("config.yaml", config(ANSWERS_SIGTERM_AGENT));
    const first = await start(home);
    expect((await send(first, "term-1", 1)).status).toBe(202);
    await vi.waitFor(() => expect(existsSync(join(home.dir, "started-term-1"))).toBe(true), {
      timeout: 10_000,
    });
    await first.stop();
    // Stopped (and its answer to the SIGTERM read) before the stop ended, not after it.
    expect(existsSync(join(home.dir, "replied-term-1"))).toBe(true);
    const messages = readLog(home).map((line) => line.msg);
    expect(messages.filter((msg) => msg.includes("reply-given-on-sigterm"))).toEqual([]);
    expect(messages.filter((msg) => msg.includes("agent run failed"))).toEqual([]);
    expect(historyRuns(home, "term-1")).toEqual([]);
    const saved = JSON.parse(readFileSync(join(home.dir, PENDING), "utf8")) as {
      runs: Array<Record<string, unknown>>;
    };
    expect(saved.runs.map((run) => run.deliveryId)).toEqual(["term-1"]);

    home.write("config.yaml", config(recorderAgent()));
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    const second = await start(home);
    running.push(second);
    await vi.waitFor(() => expect(readRun(home, "term-1")).toMatchObject({ prompt: "PR 1", route: "pr" }), {
      timeout: 10_000,
    });
  });

  it("a saved run whose route is gone stays saved until the route is back", async () => {
    const home = newHome();
    home.write("config.yaml", config(STUCK_AGENT));
    const first = await start(home);
    expect((await send(first, "gone-1", 7)).status).toBe(202);
    await vi.waitFor(() => expect(existsSync(join(home.dir, "started-gone-1"))).toBe(true), {
      timeout: 10_000,
    });
    await first.stop();

    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", config(recorderAgent(), { other: { secret: SECRET } }));
    const second = await start(home);
    await second.stop();
    // Kept in the journal (state.backend local, docs/durability.md), not run.
    expect([...liveOnDisk(home).runs.values()].map((run) => run.deliveryId)).toEqual(["gone-1"]);
    expect(readLog(home).some((line) => line.msg.includes("their route no longer exists"))).toBe(true);
    expect(readRun(home, "gone-1")).toBeUndefined();

    home.write("config.yaml", config(recorderAgent()));
    const third = await start(home);
    running.push(third);
    await vi.waitFor(() => expect(readRun(home, "gone-1")).toMatchObject({ prompt: "PR 7" }), {
      timeout: 10_000,
    });
    expect(existsSync(join(home.dir, PENDING))).toBe(false);
  });

  it("a pending file of a newer format version is moved aside as it was, and the log says a newer svc wrote it", async () => {
    const home = newHome();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", config(recorderAgent()));
    const newer = JSON.stringify({ version: 2, runs: [{ id: "from-a-newer-svc" }] });
    home.write(PENDING, newer);
    const gateway = await start(home);
    running.push(gateway);
    expect((await send(gateway, "after", 1)).status).toBe(202);
    const aside = readdirSync(home.dir).filter((name) => name.startsWith(`${PENDING}.unreadable-`));
    expect(aside.length).toBe(1);
    expect(readFileSync(join(home.dir, aside[0] as string), "utf8")).toBe(newer);
    expect(existsSync(join(home.dir, PENDING))).toBe(false);
    const line = readLog(home).find((entry) => entry.msg.includes("cannot be read; moved to"));
    expect(line).toMatchObject({ level: 50 });
    expect(JSON.stringify(line)).toContain(
      "format version 2, written by a newer version of svc (this one reads version 1)",
    );
  });

  it("an entry of the pending file that is no run this version can read is kept in the file and named at each start; the file's other runs run", async () => {
    const home = newHome();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", config(recorderAgent()));
    const saved = {
      profile: "default",
      routeName: "pr",
      deliveryId: "saved-1",
      prompt: "PR 1",
      extra: {},
      receivedAt: Date.now(),
    };
    // Edited by hand (or written by a newer svc that changed a field's type): its deliveryId is a number.
    const unknown = { ...saved, deliveryId: 7, prompt: "PR 7" };
    home.write(PENDING, JSON.stringify({ version: 1, runs: [saved, unknown] }));
    const warned = () =>
      readLog(home).filter(
        (line) =>
          line.level === 40 &&
          line.msg.includes(
            `${join(home.dir, PENDING)}: 1 entry is not an agent run this version of svc can read`,
          ),
      );
    for (const round of [1, 2]) {
      const gateway = await start(home);
      if (round === 1)
        await vi.waitFor(() => expect(readRun(home, "saved-1")).toMatchObject({ prompt: "PR 1" }), {
          timeout: 10_000,
        });
      await gateway.stop();
      // Kept as it was, not run, and said at each start.
      expect(JSON.parse(readFileSync(join(home.dir, PENDING), "utf8"))).toEqual({
        version: 1,
        runs: [unknown],
      });
      expect(warned()).toHaveLength(round);
    }
    expect(warned()[0]?.msg).toContain("runs[1].deliveryId: expected string, received number");
    expect(readdirSync(join(home.dir, "runs"))).toEqual(["saved-1.json"]);
  });

  it("a pending file that cannot be read at all (a directory in its place) is moved aside, and the log names the read error, not a format", async () => {
    const home = newHome();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", config(recorderAgent()));
    mkdirSync(join(home.dir, PENDING));
    const gateway = await start(home);
    running.push(gateway);
    expect((await send(gateway, "after", 1)).status).toBe(202);
    expect(readdirSync(home.dir).filter((name) => name.startsWith(`${PENDING}.unreadable-`))).toHaveLength(1);
    const line = readLog(home).find((entry) => entry.msg.includes("cannot be read; moved to"));
    expect(JSON.stringify(line)).toContain(`${join(home.dir, PENDING)}: cannot be read (EISDIR`);
    expect(JSON.stringify(line)).not.toContain("not a list of pending agent runs");
  });

  it("an unreadable pending file is moved aside, reported, and does not stop the gateway", async () => {
    const home = newHome();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", config(recorderAgent()));
    // Restored from a backup readable by others: what is kept aside (prompts carry payload text) is 0600.
    home.write(PENDING, "{ not json", 0o644);
    const gateway = await start(home);
    running.push(gateway);
    expect((await send(gateway, "after", 1)).status).toBe(202);
    const aside = readdirSync(home.dir).filter((name) => name.startsWith(`${PENDING}.unreadable-`));
    expect(aside.length).toBe(1);
    expect(readFileSync(join(home.dir, aside[0] as string), "utf8")).toBe("{ not json");
    expect(statSync(join(home.dir, aside[0] as string)).mode & 0o777).toBe(0o600);
    expect(
      readLog(home).some((line) => line.level === 50 && line.msg.includes("cannot be read; moved to")),
    ).toBe(true);
  });
});
