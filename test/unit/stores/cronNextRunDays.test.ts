import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createCronScheduler } from "../../../src/actors/cron.js";
import { cronStore, nextRunTime } from "../../../src/io/stores/cronStore.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/** A `next_run` written by hand on a day its month does not have (JavaScript reads 2027-02-29 as March 1st). */
const T0 = Date.parse("2026-11-22T12:00:00Z");
let home: TempHome;
afterEach(() => home?.cleanup());

describe("a next_run on a day its month does not have", () => {
  it("is no time, with or without a zone; the last day of a month, a leap day and 24:00 are", () => {
    for (const text of [
      "2027-02-29T09:00:00Z",
      "2027-02-29 09:00",
      "2026-04-31",
      "2028-02-30T09:00:00+01:00",
    ])
      expect(nextRunTime(text), text).toBeNaN();
    expect(nextRunTime("2028-02-29T09:00:00Z")).toBe(Date.parse("2028-02-29T09:00:00Z"));
    expect(nextRunTime("2026-04-30 09:00")).toBe(Date.parse("2026-04-30T09:00:00Z"));
    expect(nextRunTime("2026-12-31T24:00:00Z")).toBe(Date.parse("2027-01-01T00:00:00Z"));
  });

  it("is set again from the schedule by the scheduler, the warning naming the day that does not exist, not run on another day", async () => {
    home = tempHome();
    const store = cronStore(join(home.dir, "cron", "jobs.json"));
    await store.update((records) => {
      records.leap = {
        id: "leap",
        name: "leap",
        schedule: "every 1h",
        prompt: "hi",
        deliver: "log",
        deliver_extra: {},
        state: "enabled",
        next_run: "2027-02-29T09:00:00Z",
        created_at: new Date(T0).toISOString(),
      };
    });
    const log = captureLogger();
    const scheduler = createCronScheduler({
      stores: { profiles: () => ["default"], store: () => store },
      runJob: async () => "ok",
      logger: log.logger,
      clock: { now: () => T0, setTimeout: () => 0, clearTimeout: () => {} },
    });
    await scheduler.tick();
    await scheduler.idle();
    const next = new Date(T0 + 3_600_000).toISOString();
    expect(store.read().records.leap?.next_run).toBe(next);
    expect(log.messages().filter((m) => m.includes("is not a time"))).toEqual([
      `[cron] leap: next_run "2027-02-29T09:00:00Z" in ${store.path} is not a time; it is set from the schedule to ${next} — 2027-02-29 is no date: February 2027 has 28 days`,
    ]);
  });
});
