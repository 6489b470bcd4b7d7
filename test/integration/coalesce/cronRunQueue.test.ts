import {
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import {
  GATED_AGENT,
  gatewayPerTest,
  inHome,
  RECORDER_AGENT,
  recorderAgent,
  startGatewayInHome,
  webhookConfig,
} from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

/** Jobs fired by cron_job routes (spec 3.2) are agent runs like any other: bounded and queued. */

const perTest = gatewayPerTest();
const OPEN = "INSECURE_NO_AUTH";

/** An agent that records how many runs were active when it started, then takes 300 ms. */
const COUNTING_AGENT = [
  'dir="$(dirname "$0")/../q"; mkdir -p "$dir/active" "$dir/counts"',
  'cat >/dev/null; touch "$dir/active/$$"',
  'ls "$dir/active" | wc -l > "$dir/counts/$$"',
  "sleep 0.3",
  'rm "$dir/active/$$"',
  "printf done",
].join("\n");

const JOBS = JSON.stringify({
  revision: 1,
  jobs: {
    j1: {
      id: "j1",
      name: "triage",
      schedule: "every 1d",
      prompt: "job triage",
      deliver: "log",
      deliver_extra: {},
      state: "enabled",
      next_run: "2099-01-01T00:00:00.000Z",
      created_at: "2026-11-22T00:00:00.000Z",
    },
  },
});

function start(runQueueCap?: number, agent = COUNTING_AGENT) {
  return perTest.start({
    files: { "agent/count.sh": agent, "cron/jobs.json": JOBS },
    ...(runQueueCap === undefined ? {} : { runQueueCap }),
    config: webhookConfig(
      { fire: { secret: OPEN, cron_job: "triage" } },
      { rate_limit: 1000 },
      { agent: { provider: "command", command: ["bash", inHome("agent/count.sh")], max_concurrent_runs: 2 } },
    ),
  });
}

describe("cron_job routes share the run queue (agent.max_concurrent_runs)", () => {
  it("a burst of events fires the job once per event, never more than max_concurrent_runs at once", async () => {
    const gw = await start();
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        postJson(gw.url("/webhooks/fire"), { i }, { "x-request-id": `f${i}` }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202, 202]);
    const counts = join(gw.home.dir, "q", "counts");
    await vi.waitFor(
      () => {
        expect(existsSync(counts) ? readdirSync(counts) : []).toHaveLength(6);
        expect(gw.logs().filter((l) => l.msg.endsWith("triage: run finished"))).toHaveLength(6);
      },
      { timeout: 10_000, interval: 50 },
    );
    const active = readdirSync(counts).map((f) => Number(readFileSync(join(counts, f), "utf8").trim()));
    expect(Math.max(...active)).toBe(2);
  });

  it("past the queue's cap the event is answered 503 and not fired; the sender's retry is not a duplicate", async () => {
    const gw = await start(1, GATED_AGENT);
    const answers = [];
    for (let i = 0; i < 4; i++)
      answers.push(await postJson(gw.url("/webhooks/fire"), { i }, { "x-request-id": `c${i}` }));
    // Two run at once (held until released), one waits, the fourth finds the waiting list full.
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 503]);
    expect(answers[3]?.body).toEqual({ error: "Agent run queue is full, retry later" });
    writeFileSync(join(gw.home.dir, "release"), "");
    await vi.waitFor(
      () => expect(gw.logs().filter((l) => l.msg.endsWith("triage: run finished"))).toHaveLength(3),
      { timeout: 10_000, interval: 50 },
    );
    const retry = await postJson(gw.url("/webhooks/fire"), { i: 3 }, { "x-request-id": "c3" });
    expect(retry).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "c3" } });
  });
});

describe("a fire waiting in the queue whose job is paused meanwhile", () => {
  it("is dropped at its turn, with the WARN, and svc webhook deliveries says why on its row (RUN -)", async () => {
    const gw = await start(undefined, GATED_AGENT);
    const answers = [];
    for (let i = 0; i < 3; i++)
      answers.push(await postJson(gw.url("/webhooks/fire"), { i }, { "x-request-id": `w${i}` }));
    // Two run at once (held until released); w2 waits for a slot.
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
    const jobs = JSON.parse(JOBS);
    jobs.jobs.j1.state = "paused";
    writeFileSync(join(gw.home.dir, "cron", "jobs.json"), JSON.stringify({ ...jobs, revision: 2 }));
    writeFileSync(join(gw.home.dir, "release"), "");
    const why = "cron_job triage is paused; event dropped";
    await vi.waitFor(
      () => expect(gw.logs().find((l) => l.msg.endsWith(why))).toMatchObject({ delivery_id: "w2" }),
      { timeout: 10_000, interval: 50 },
    );
    await vi.waitFor(
      async () => {
        const listed = await runInProcess(["webhook", "deliveries"], {
          SVC_HOME: gw.home.dir,
          PATH: process.env.PATH ?? "",
        });
        const row = listed.stdout.split("\n").find((line) => /\sw2\s/.test(line));
        expect(row).toMatch(new RegExp(`\\s202 accepted\\s+-\\s+-\\s+${why}$`));
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});

describe("a cron_job route whose cron store cannot be read", () => {
  it("answers 503 with Retry-After and forgets the delivery id, so the sender's retry fires the job once the store is fixed", async () => {
    const gw = await start();
    writeFileSync(join(gw.home.dir, "cron", "jobs.json"), '{"revision": 1, "jobs": {');
    const refused = await postJson(gw.url("/webhooks/fire"), { i: 1 }, { "x-request-id": "broken-1" });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.body).toEqual({ error: "Cron job store cannot be read, retry later" });
    const logged = gw.logs().find((l) => l.msg.includes("cron_job triage not fired"));
    expect(logged).toMatchObject({ route: "fire", delivery_id: "broken-1", job: "triage" });
    writeFileSync(join(gw.home.dir, "cron", "jobs.json"), JOBS);
    const retry = await postJson(gw.url("/webhooks/fire"), { i: 1 }, { "x-request-id": "broken-1" });
    expect(retry).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "broken-1" } });
    await vi.waitFor(
      () => expect(gw.logs().filter((l) => l.msg.endsWith("triage: run finished"))).toHaveLength(1),
      { timeout: 10_000, interval: 50 },
    );
  });
});

describe("a fire waiting in the queue whose cron store breaks meanwhile", () => {
  for (const restarted of [false, true])
    it(`is dropped at its turn with the ERROR, svc webhook deliveries says why (run dropped), and the sender's retry is taken once the store is fixed${restarted ? ", also after a restart (the journal forgets its id)" : ""}`, async () => {
      const gw = await start(undefined, GATED_AGENT);
      const answers = [];
      for (let i = 0; i < 3; i++)
        answers.push(await postJson(gw.url("/webhooks/fire"), { i }, { "x-request-id": `u${i}` }));
      // Two run at once (held until released); u2 waits for a slot while jobs.json is half-edited.
      expect(answers.map((a) => a.status)).toEqual([202, 202, 202]);
      const file = join(gw.home.dir, "cron", "jobs.json");
      writeFileSync(file, '{"revision": 3, "jobs": {');
      writeFileSync(join(gw.home.dir, "release"), "");
      const dropped = await vi.waitFor(
        () => {
          const line = gw.logs().find((l) => l.delivery_id === "u2" && l.msg.includes("not fired"));
          expect(line).toMatchObject({ level: 50, route: "fire", job: "triage" });
          return line?.msg ?? "";
        },
        { timeout: 10_000, interval: 50 },
      );
      const why =
        "cron_job triage not fired — event dropped, its delivery ID forgotten (the sender's retry is taken once the store can be read): ";
      expect(dropped).toMatch(`[webhook] fire: ${why}${file}: not valid JSON`);
      const env = { SVC_HOME: gw.home.dir, PATH: process.env.PATH ?? "" };
      await vi.waitFor(
        async () => {
          const listed = await runInProcess(["webhook", "deliveries"], env);
          const row = listed.stdout.split("\n").find((line) => /\su2\s/.test(line));
          expect(row).toMatch(
            /\s202 accepted\s+-\s+-\s+cron_job triage not fired — event dropped, its delivery ID forgotten/,
          );
          const json = await runInProcess(["webhook", "deliveries", "--id", "u2", "--json"], env);
          const rows = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
          expect(rows.find((r) => r.id === "u2")?.run).toMatchObject({
            outcome: "dropped",
            error: expect.stringContaining(why),
          });
        },
        { timeout: 10_000, interval: 100 },
      );
      writeFileSync(file, JOBS);
      let url = gw.url("/webhooks/fire");
      if (restarted) {
        await gw.gateway.stop();
        url = `http://127.0.0.1:${(await perTest.restart(gw)).port}/webhooks/fire`;
      }
      const retry = await postJson(url, { i: 2 }, { "x-request-id": "u2" });
      expect(retry).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "u2" } });
      await vi.waitFor(
        () => expect(gw.logs().filter((l) => l.msg.endsWith("triage: run finished"))).toHaveLength(3),
        { timeout: 10_000, interval: 50 },
      );
    });
});

describe("a cron_job route of a profile whose directory became a symbolic link to nothing", () => {
  it("answers 503 with Retry-After naming the link, forgets the delivery id, and fires the job once the link is restored", async () => {
    const gw = await perTest.start({
      files: { "agent/count.sh": COUNTING_AGENT, "profiles/work/cron/jobs.json": JOBS },
      config: webhookConfig(
        { fire: { secret: OPEN, profile: "work", cron_job: "triage" } },
        { rate_limit: 1000 },
        { agent: { provider: "command", command: ["bash", inHome("agent/count.sh")] } },
      ),
    });
    const work = join(gw.home.dir, "profiles", "work");
    // A dotfiles checkout moved: the profile's directory is a link to where it no longer is.
    renameSync(work, join(gw.home.dir, "work-real"));
    symlinkSync(join(gw.home.dir, "gone"), work);
    const refused = await postJson(gw.url("/webhooks/fire"), { i: 1 }, { "x-request-id": "link-1" });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(refused.body).toEqual({ error: "Cron job store cannot be read, retry later" });
    const logged = gw.logs().find((l) => l.delivery_id === "link-1");
    expect(logged).toMatchObject({ level: 50, route: "fire", job: "triage" });
    expect(logged?.msg).toContain(
      `cron_job triage in profile work not fired — ${work}: a symbolic link to ${join(gw.home.dir, "gone")}, which is not a directory (missing or moved)`,
    );
    rmSync(work);
    symlinkSync(join(gw.home.dir, "work-real"), work);
    const retry = await postJson(gw.url("/webhooks/fire"), { i: 1 }, { "x-request-id": "link-1" });
    expect(retry).toMatchObject({ status: 202, body: { status: "accepted", delivery_id: "link-1" } });
    await vi.waitFor(
      () =>
        expect(gw.logs().filter((l) => l.msg.endsWith("triage in profile work: run finished"))).toHaveLength(
          1,
        ),
      { timeout: 10_000, interval: 50 },
    );
  });
});

describe("a cron_job route of a profile whose cron directory became a symbolic link to nothing", () => {
  it.each([
    ["the default profile", undefined],
    ["a named profile", "work"],
  ])(
    "of %s answers 503 naming the link, not 202 with the job taken for one that does not exist",
    async (_, profile) => {
      const root = profile === undefined ? "" : `profiles/${profile}/`;
      const gw = await perTest.start({
        files: { "agent/count.sh": COUNTING_AGENT, [`${root}cron/jobs.json`]: JOBS },
        config: webhookConfig(
          { fire: { secret: OPEN, cron_job: "triage", ...(profile === undefined ? {} : { profile }) } },
          { rate_limit: 1000 },
          { agent: { provider: "command", command: ["bash", inHome("agent/count.sh")] } },
        ),
      });
      const cron = join(gw.home.dir, root, "cron");
      renameSync(cron, join(gw.home.dir, "cron-real"));
      symlinkSync(join(gw.home.dir, "gone"), cron);
      const refused = await postJson(gw.url("/webhooks/fire"), { i: 1 }, { "x-request-id": "cron-link-1" });
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ error: "Cron job store cannot be read, retry later" });
      const logged = gw.logs().find((l) => l.delivery_id === "cron-link-1");
      expect(logged).toMatchObject({ level: 50, route: "fire", job: "triage" });
      expect(logged?.msg).toContain(
        `not fired — ${cron}: a symbolic link to ${join(gw.home.dir, "gone")}, which is not a directory (missing or moved)`,
      );
    },
  );
});

describe("fired jobs unfinished at shutdown", () => {
  const homes: TempHome[] = [];
  const running: Gateway[] = [];
  afterEach(async () => {
    for (const gateway of running.splice(0)) await gateway.stop();
    for (const home of homes.splice(0)) home.cleanup();
  });

  it("are saved at stop and run once each, with the event in the prompt, at the next start", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("cron/jobs.json", JOBS);
    const stuck = ["bash", "-c", 'touch "$0/started-$$"; exec sleep 30', inHome("")];
    const routes = { fire: { secret: OPEN, cron_job: "triage" } };
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(routes, {}, { agent: { provider: "command", command: stuck, max_concurrent_runs: 1 } }),
      ),
    );
    const first = await startGatewayInHome(home);
    for (const id of ["s1", "s2"])
      expect(
        await postJson(`http://127.0.0.1:${first.port}/webhooks/fire`, { id }, { "x-request-id": id }),
      ).toMatchObject({ status: 202 });
    await vi.waitFor(() => expect(readdirSync(home.dir).some((f) => f.startsWith("started-"))).toBe(true), {
      timeout: 10_000,
    });
    await first.stop();
    const saved = JSON.parse(readFileSync(join(home.dir, "webhook-pending-runs.json"), "utf8"));
    expect(JSON.stringify(saved)).toContain("[Webhook event: route fire, event (none), delivery s2]");

    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", stringify(webhookConfig(routes, {}, { agent: recorderAgent() })));
    const second = await startGatewayInHome(home);
    running.push(second);
    const runs = await vi.waitFor(
      () => {
        const dir = join(home.dir, "runs");
        const found = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
        if (found.length < 2) throw new Error("not yet");
        return found.map(
          (f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as { prompt: string; route: string },
        );
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(runs.map((r) => r.route)).toEqual(["cron:triage", "cron:triage"]);
    expect(runs.map((r) => /delivery (s\d)\]/.exec(r.prompt)?.[1]).sort()).toEqual(["s1", "s2"]);
  });
});

describe("a fire saved at stop stays a fire of its job, whatever the route became while the gateway was down", () => {
  const homes: TempHome[] = [];
  const running: Gateway[] = [];
  afterEach(async () => {
    for (const gateway of running.splice(0)) await gateway.stop();
    for (const home of homes.splice(0)) home.cleanup();
  });

  /** Fires `triage` twice (s1 runs, s2 waits behind it), stops, then starts with `routes` and `jobs`. */
  async function restartWith(routes: Record<string, unknown>, jobs = JOBS) {
    const home = tempHome();
    homes.push(home);
    home.write("cron/jobs.json", JOBS);
    const stuck = ["bash", "-c", 'touch "$0/started-$$"; exec sleep 30', inHome("")];
    const fired = { fire: { secret: OPEN, cron_job: "triage" } };
    const agent = { provider: "command", command: stuck, max_concurrent_runs: 1 };
    home.write("config.yaml", stringify(webhookConfig(fired, {}, { agent })));
    const first = await startGatewayInHome(home);
    for (const id of ["s1", "s2"])
      expect(
        await postJson(`http://127.0.0.1:${first.port}/webhooks/fire`, { id }, { "x-request-id": id }),
      ).toMatchObject({ status: 202 });
    await vi.waitFor(() => expect(readdirSync(home.dir).some((f) => f.startsWith("started-"))).toBe(true), {
      timeout: 10_000,
    });
    await first.stop();
    home.write("cron/jobs.json", jobs);
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", stringify(webhookConfig(routes, {}, { agent: recorderAgent() })));
    const second = await startGatewayInHome(home);
    running.push(second);
    return { home, second };
  }

  const logLines = (home: TempHome) =>
    readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown> & { msg: string });

  const recorded = (home: TempHome) => {
    const dir = join(home.dir, "runs");
    const found = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
    return found.map(
      (f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as { prompt: string; route: string },
    );
  };

  it("a route switched to agent mode runs the saved fires as fires of the job, recorded in its last_run", async () => {
    const { home } = await restartWith({ fire: { secret: OPEN, prompt: "agent run" } });
    const runs = await vi.waitFor(
      () => {
        const found = recorded(home);
        if (found.length < 2) throw new Error("not yet");
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(runs.map((r) => r.route)).toEqual(["cron:triage", "cron:triage"]);
    expect(runs.every((r) => r.prompt.startsWith("job triage\n\n[Webhook event: route fire,"))).toBe(true);
    await vi.waitFor(
      () => {
        const jobs = JSON.parse(readFileSync(join(home.dir, "cron/jobs.json"), "utf8"));
        expect(jobs.jobs.j1.last_run).toMatchObject({ status: "ok" });
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it("a saved agent run stays an agent run on a route switched to cron_job; the job is not fired", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("cron/jobs.json", JOBS);
    const stuck = ["bash", "-c", 'touch "$0/started-$$"; exec sleep 30', inHome("")];
    const agent = { provider: "command", command: stuck, max_concurrent_runs: 1 };
    const agentRoute = { fire: { secret: OPEN, prompt: "agent run" } };
    home.write("config.yaml", stringify(webhookConfig(agentRoute, {}, { agent })));
    const first = await startGatewayInHome(home);
    for (const id of ["a1", "a2"])
      expect(
        await postJson(`http://127.0.0.1:${first.port}/webhooks/fire`, { id }, { "x-request-id": id }),
      ).toMatchObject({ status: 202 });
    await vi.waitFor(() => expect(readdirSync(home.dir).some((f) => f.startsWith("started-"))).toBe(true), {
      timeout: 10_000,
    });
    await first.stop();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    const fired = { fire: { secret: OPEN, cron_job: "triage" } };
    home.write("config.yaml", stringify(webhookConfig(fired, {}, { agent: recorderAgent() })));
    running.push(await startGatewayInHome(home));
    const runs = await vi.waitFor(
      () => {
        const found = recorded(home);
        if (found.length < 2) throw new Error("not yet");
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(runs.map((r) => [r.route, r.prompt])).toEqual([
      ["fire", "agent run"],
      ["fire", "agent run"],
    ]);
    const jobs = JSON.parse(readFileSync(join(home.dir, "cron/jobs.json"), "utf8"));
    expect(jobs.jobs.j1.last_run).toBeUndefined();
  });

  it("a fire saved by an older version (no job named in webhook-pending-runs.json) still fires its route's job", async () => {
    const home = tempHome();
    homes.push(home);
    home.write("cron/jobs.json", JOBS);
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    // As the version before this one wrote it: the route, delivery id and the fire's prompt, no job.
    const prompt = "job triage\n\n[Webhook event: route fire, event (none), delivery old1]\n{}";
    const run = {
      profile: "default",
      routeName: "fire",
      deliveryId: "old1",
      prompt,
      extra: {},
      receivedAt: 1000,
    };
    home.write("webhook-pending-runs.json", JSON.stringify({ version: 1, runs: [run] }));
    const fired = { fire: { secret: OPEN, cron_job: "triage" } };
    home.write("config.yaml", stringify(webhookConfig(fired, {}, { agent: recorderAgent() })));
    running.push(await startGatewayInHome(home));
    const runs = await vi.waitFor(
      () => {
        const found = recorded(home);
        if (found.length < 1) throw new Error("not yet");
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(runs).toMatchObject([{ route: "cron:triage", prompt }]);
  });

  it("a saved fire whose job is gone is not run: one WARN per fire names the route, delivery id and job", async () => {
    const { home, second } = await restartWith(
      { fire: { secret: OPEN, prompt: "agent run" } },
      JSON.stringify({ revision: 2, jobs: {} }),
    );
    const dropped = await vi.waitFor(
      () => {
        const lines = logLines(home).filter((l) => l.msg.includes("cron_job triage does not exist"));
        if (lines.length < 2) throw new Error("not yet");
        return lines;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(dropped.map((l) => l.delivery_id).sort()).toEqual(["s1", "s2"]);
    expect(dropped.every((l) => l.route === "fire" && l.job === "triage")).toBe(true);
    expect(dropped[0]?.msg).toBe("[webhook] fire: cron_job triage does not exist; event dropped");
    await second.stop();
    running.splice(0);
    expect(recorded(home)).toEqual([]);
  });
});
