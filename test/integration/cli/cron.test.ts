import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { RECORDER_AGENT, recorderAgent } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

describe("svc cron (real subprocesses)", { timeout: 90_000 }, () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", stringify(cliConfig({}, { agent: recorderAgent("the agent's reply") })));
  });
  afterAll(() => home.cleanup());

  const jobs = () =>
    JSON.parse(readFileSync(join(home.dir, "cron", "jobs.json"), "utf8")).jobs as Record<
      string,
      Record<string, unknown>
    >;

  it("create stores the job (0600) with its next run; list shows it", async () => {
    const created = await svc(home, [
      "cron",
      "create",
      "--name",
      "digest",
      "--schedule",
      "every 15m",
      "--prompt",
      "Summarize the day",
      "--deliver-extra",
      "chat_id=42",
    ]);
    expect(created.code).toBe(0);
    const id = /Created cron job ([0-9a-f]+) \(digest\)/.exec(created.stdout)?.[1];
    expect(id).toBeDefined();
    const job = jobs()[id as string];
    expect(job).toMatchObject({
      name: "digest",
      schedule: "every 15m",
      prompt: "Summarize the day",
      deliver: "log",
      deliver_extra: { chat_id: "42" },
      state: "enabled",
    });
    expect(Date.parse(job?.next_run as string) - Date.parse(job?.created_at as string)).toBe(15 * 60_000);
    expect((await import("node:fs")).statSync(join(home.dir, "cron", "jobs.json")).mode & 0o777).toBe(0o600);
    const list = await svc(home, ["cron", "list"]);
    expect(list.stdout).toMatch(/^ID\s+NAME\s+SCHEDULE\s+STATE\s+NEXT RUN\s+LAST RUN$/m);
    expect(list.stdout).toMatch(
      new RegExp(`^${id}\\s+digest\\s+every 15m\\s+enabled\\s+\\S+Z\\s+never$`, "m"),
    );
  });

  it("refuses a bad schedule, a duplicate name and an unknown job with clear messages", async () => {
    const bad = await svc(home, [
      "cron",
      "create",
      "--name",
      "x",
      "--schedule",
      "61 * * * *",
      "--prompt",
      "p",
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('schedule "61 * * * *": not a valid cron expression');
    const dup = await svc(home, ["cron", "create", "--name", "digest", "--schedule", "1h", "--prompt", "p"]);
    expect(dup.stderr).toContain('a cron job named "digest" already exists');
    const unknown = await svc(home, ["cron", "pause", "nope"]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('cron job "nope" not found');
  });

  it("pause, resume, run (prints the reply, records last_run) and remove by name", async () => {
    expect((await svc(home, ["cron", "pause", "digest"])).stdout).toContain("is now paused");
    expect((await svc(home, ["cron", "list"])).stdout).toMatch(/digest\s+every 15m\s+paused\s+-\s+never/);
    expect((await svc(home, ["cron", "resume", "digest"])).stdout).toContain("is now enabled");
    const run = await svc(home, ["cron", "run", "digest"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("the agent's reply\n");
    const job = Object.values(jobs())[0];
    expect(job?.last_run).toMatchObject({ status: "ok", trigger: "manual" });
    expect((await svc(home, ["cron", "remove", "digest"])).stdout).toContain("Removed cron job");
    expect(jobs()).toEqual({});
  });
});
