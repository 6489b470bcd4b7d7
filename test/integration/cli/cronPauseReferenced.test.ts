import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { createCronJob, homeFiringNightly } from "./cronJobRoutes.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc cron pause / disable of a job that webhook routes fire (spec 3.2)", { timeout: 90_000 }, () => {
  it("warns which static routes and subscriptions of that profile now drop their events, and how to undo it", async () => {
    home = await homeFiringNightly();
    const create = (name: string) => createCronJob(home, name);

    const paused = await svc(home, ["cron", "pause", "nightly"]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toContain("is now paused");
    expect(paused.stderr).toBe(
      "Warning: route st (config.yaml), subscription dyn fire this job (cron_job): their events are now logged and dropped without a run (still answered 202 accepted) until svc cron resume nightly\n",
    );
    // Nothing changed: nothing new to warn about.
    expect((await svc(home, ["cron", "pause", "nightly"])).stderr).toBe("");

    const disabled = await svc(home, ["cron", "disable", "nightly"]);
    expect(disabled.code).toBe(0);
    expect(disabled.stderr).toContain("subscription dyn fire this job (cron_job)");
    // Resuming it says nothing: the routes fire it again.
    expect((await svc(home, ["cron", "resume", "nightly"])).stderr).toBe("");

    // A job nothing fires is paused without a warning; a single route is named in the singular.
    await create("solo");
    expect((await svc(home, ["cron", "pause", "solo"])).stderr).toBe("");
    await create("weekly");
    expect((await svc(home, ["cron", "disable", "weekly"])).stderr).toBe(
      "Warning: route other (config.yaml) fires this job (cron_job): its events are now logged and dropped without a run (still answered 202 accepted) until svc cron resume weekly\n",
    );
  });
});

describe("svc webhook subscribe --cron-job <id> of a paused job", { timeout: 90_000 }, () => {
  it("names the job by its name and the id given (the warning named the id, then resumed the name)", async () => {
    home = tempHome();
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
    const created = await svc(home, [
      "cron",
      "create",
      "--name",
      "triage",
      "--schedule",
      "1d",
      "--prompt",
      "x",
    ]);
    const id = /Created cron job ([0-9a-f]{8})/.exec(created.stdout)?.[1] ?? "";
    expect((await svc(home, ["cron", "pause", "triage"])).code).toBe(0);
    const sub = await svc(home, ["webhook", "subscribe", "fire", "--cron-job", id]);
    expect(sub.code).toBe(0);
    expect(sub.stderr).toContain(
      `Warning: cron job triage (${id}) is paused: events are logged and dropped until svc cron resume triage\n`,
    );
  });
});
