import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  RECORDER_AGENT,
  type RecordedRun,
  readRun,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const OPEN = "INSECURE_NO_AUTH";
const FAR = "2099-01-01T00:00:00.000Z";
const PAST = "2026-01-01T00:00:00.000Z";

const job = (id: string, name: string, prompt: string, nextRun: string) => ({
  id,
  name,
  schedule: "every 1d",
  prompt,
  deliver: "log",
  deliver_extra: {},
  state: "enabled",
  next_run: nextRun,
  created_at: "2026-11-22T00:00:00.000Z",
});
const jobsFile = (...jobs: ReturnType<typeof job>[]) =>
  JSON.stringify({ revision: 1, jobs: Object.fromEntries(jobs.map((j) => [j.id, j])) });

/** Every run the recorder agent wrote so far. */
function runs(g: TestGateway): RecordedRun[] {
  let files: string[];
  try {
    files = readdirSync(join(g.home.dir, "runs")).filter((f) => f.endsWith(".json"));
  } catch {
    return [];
  }
  return files.map((f) => readRun(g.home, f.slice(0, -5)) as RecordedRun);
}

function waitForRuns(g: TestGateway, count: number): Promise<RecordedRun[]> {
  return vi.waitFor(
    () => {
      const found = runs(g);
      if (found.length < count) throw new Error(`${found.length} of ${count} runs so far`);
      return found;
    },
    { timeout: 10_000, interval: 50 },
  );
}

const lastRun = (g: TestGateway, relative: string, id: string) =>
  JSON.parse(readFileSync(join(g.home.dir, relative), "utf8")).jobs[id].last_run;

describe("cron jobs of every profile (each profile has its own cron store)", () => {
  it("the scheduler runs the due jobs of the default profile and of each profile directory", async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "cron/jobs.json": jobsFile(job("d1", "digest", "default digest", PAST)),
        "profiles/work/cron/jobs.json": jobsFile(job("w1", "digest", "work digest", PAST)),
        "profiles/home/.env": "",
      },
      config: webhookConfig({}, {}, { agent: recorderAgent() }),
    });
    const found = await waitForRuns(gw, 2);
    expect(found.map((r) => r.prompt).sort()).toEqual(["default digest", "work digest"]);
    expect(found.every((r) => r.route === "cron:digest" && r.event === "schedule")).toBe(true);
    const g = gw;
    await vi.waitFor(
      () => {
        expect(lastRun(g, "profiles/work/cron/jobs.json", "w1")).toMatchObject({ status: "ok" });
        expect(lastRun(g, "cron/jobs.json", "d1")).toMatchObject({ status: "ok" });
      },
      { timeout: 10_000 },
    );
  });

  it("the replies of two namesake jobs to the log target are told apart: a named profile's says its profile", async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "cron/jobs.json": jobsFile(job("d1", "digest", "default digest", PAST)),
        "profiles/work/cron/jobs.json": jobsFile(job("w1", "digest", "work digest", PAST)),
      },
      config: webhookConfig({}, {}, { agent: recorderAgent() }),
    });
    const g = gw;
    const replies = () => g.logs().filter((line) => line.msg.startsWith("[webhook] cron:digest reply:"));
    await vi.waitFor(() => expect(replies()).toHaveLength(2), { timeout: 10_000 });
    const byJob = (id: string) =>
      replies().find((line) => String(line.delivery_id).startsWith(`cron-${id}-`));
    expect(byJob("w1")).toMatchObject({ route: "cron:digest", profile: "work" });
    expect(byJob("d1")).toMatchObject({ route: "cron:digest" });
    expect(byJob("d1")).not.toHaveProperty("profile");
  });

  it("a cron_job route bound to a profile fires that profile's job, not the default profile's namesake", async () => {
    gw = await startTestGateway({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "cron/jobs.json": jobsFile(
          job("d1", "nightly", "default nightly", FAR),
          job("d2", "default-only", "only in default", FAR),
        ),
        "profiles/work/cron/jobs.json": jobsFile(job("w1", "nightly", "work nightly", FAR)),
      },
      config: webhookConfig(
        {
          work_fire: { secret: OPEN, profile: "work", cron_job: "nightly" },
          work_missing: { secret: OPEN, profile: "work", cron_job: "default-only" },
        },
        { rate_limit: 1000 },
        { gateway: { multiplex_profiles: true }, agent: recorderAgent() },
      ),
    });
    const fired = await postJson(
      gw.url("/p/work/webhooks/work_fire"),
      { n: 1 },
      { "x-forge-delivery": "e1" },
    );
    expect(fired).toMatchObject({ status: 202, body: { status: "accepted" } });
    const [run] = await waitForRuns(gw, 1);
    expect(run?.prompt).toContain(
      "work nightly\n\n[Webhook event: route work_fire, event (none), delivery e1]",
    );
    const g = gw;
    await vi.waitFor(
      () =>
        expect(lastRun(g, "profiles/work/cron/jobs.json", "w1")).toMatchObject({
          trigger: "webhook:work_fire:e1",
        }),
      { timeout: 10_000 },
    );
    expect(lastRun(gw, "cron/jobs.json", "d1")).toBeUndefined();

    const missing = await postJson(gw.url("/p/work/webhooks/work_missing"), {}, { "x-forge-delivery": "e2" });
    expect(missing).toMatchObject({ status: 202 });
    await vi.waitFor(
      () =>
        expect(g.logs().map((l) => l.msg)).toContain(
          "[webhook] work_missing: cron_job default-only does not exist in profile work; event dropped",
        ),
      { timeout: 10_000 },
    );
    expect(runs(gw)).toHaveLength(1);
  });
});
