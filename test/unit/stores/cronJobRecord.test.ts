import { describe, expect, it } from "vitest";
import { jobRecords, lookupJob, parseCronJob } from "../../../src/io/stores/cronJobRecord.js";

const FILE = "/home/u/.svc/cron/jobs.json";

/**
 * cron/jobs.json may be edited by hand. A record that lacks a field or holds a wrong value is named by its
 * file, key and problem; before, `svc cron list` crashed on it (reading 'localeCompare' of undefined),
 * a run delivered to "undefined", and the scheduler said `text.trim is not a function`.
 */
describe("a cron job record edited by hand", () => {
  it("takes the defaults svc cron create writes for deliver, deliver_extra and state; null is absent", () => {
    const parsed = parseCronJob(FILE, "a1", {
      name: "nightly",
      schedule: "every 1h",
      prompt: "Summarize",
      next_run: null,
      deliver_extra: { chat_id: 42, silent: true },
      note: "a field of its own",
      created_at: 1764000000,
    });
    expect(parsed).toEqual({
      ok: true,
      key: "a1",
      job: {
        id: "a1",
        name: "nightly",
        schedule: "every 1h",
        prompt: "Summarize",
        deliver: "log",
        deliver_extra: { chat_id: "42", silent: "true" },
        state: "enabled",
        note: "a field of its own",
        created_at: 1764000000,
      },
    });
  });

  it("is refused with an unknown deliver target (svc cron create refuses it; every run failed after its agent ran)", () => {
    const job = { name: "n", schedule: "every 1h", prompt: "p" };
    const parsed = parseCronJob(FILE, "a1", { ...job, deliver: "telegarm" });
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      expect.stringMatching(
        /^\/home\/u\/\.svc\/cron\/jobs\.json: jobs\.a1\.deliver: unknown target "telegarm" — did you mean "telegram"\? use one of log, telegram, /,
      ),
    ]);
    // Every name svc cron create takes is a target here too (aliases included).
    for (const deliver of ["log", "telegram", "github_comment", "homeassistant", "chat_13"])
      expect(parseCronJob(FILE, "a1", { ...job, deliver }).ok).toBe(true);
  });

  it("takes a null deliver_extra key as absent, as a null field", () => {
    const parsed = parseCronJob(FILE, "a1", {
      name: "n",
      schedule: "every 1h",
      prompt: "p",
      deliver_extra: { chat_id: "42", thread_id: null },
    });
    expect(parsed.ok && parsed.job.deliver_extra).toEqual({ chat_id: "42" });
  });

  it("is refused naming the file, the key and the problem", () => {
    const problems = (raw: unknown) => {
      const parsed = parseCronJob(FILE, "a1", raw);
      return parsed.ok ? [] : parsed.problems;
    };
    expect(problems({ id: "a1" })).toEqual([
      `${FILE}: jobs.a1.name: missing — expected a string`,
      `${FILE}: jobs.a1.schedule: missing — expected a string`,
      `${FILE}: jobs.a1.prompt: missing — expected a string`,
    ]);
    const job = { name: "n", schedule: "every 1h", prompt: "p" };
    expect(problems({ ...job, schedule: 5 })).toEqual([
      `${FILE}: jobs.a1.schedule: expected a string, got 5 — put it in quotes if it is meant as text`,
    ]);
    expect(problems({ ...job, schedule: "every tuesday" })).toEqual([
      `${FILE}: jobs.a1.schedule: "every tuesday": expected 5 cron fields (minute hour day-of-month month day-of-week, e.g. "*/15 * * * *"), a macro (@hourly, @daily (or @midnight), @weekly, @monthly, @yearly (or @annually)) or an interval like "every 15m", "30s", "2h", "1d"`,
    ]);
    expect(problems({ ...job, state: "on" })).toEqual([
      `${FILE}: jobs.a1.state: expected one of "enabled", "paused", "disabled", got "on"`,
    ]);
    expect(problems({ ...job, prompt: "  " })).toEqual([
      `${FILE}: jobs.a1.prompt: must not be empty — give the text the agent runs`,
    ]);
    // A name of allowed characters that is too long is named by its length, not by the characters.
    expect(problems({ ...job, name: "n".repeat(65) })).toEqual([
      `${FILE}: jobs.a1.name: 65 characters long — a job name has at most 64: shorten it`,
    ]);
    expect(problems({ ...job, name: "n".repeat(64) })).toEqual([]);
    expect(problems({ ...job, name: "-n" })).toEqual([
      `${FILE}: jobs.a1.name: use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)`,
    ]);
    expect(problems({ ...job, id: "b2" })).toEqual([
      `${FILE}: jobs.a1.id: "b2" is not the key the job is stored under — make them the same`,
    ]);
    expect(problems("hello")).toEqual([`${FILE}: jobs.a1: expected a mapping, got "hello"`]);
    const reserved = parseCronJob(FILE, "__proto__", job);
    expect(reserved.ok ? [] : reserved.problems).toEqual([
      `${FILE}: jobs.__proto__: "__proto__" cannot be used as an id (JavaScript reserves it) — rename it`,
    ]);
  });

  it('names the problem of a wrong deliver_extra value, created_at or empty deliver (not zod\'s bare "Invalid input"), once', () => {
    const problems = (raw: unknown) => {
      const parsed = parseCronJob(FILE, "a1", raw);
      return parsed.ok ? [] : parsed.problems;
    };
    const job = { name: "n", schedule: "every 1h", prompt: "p" };
    expect(problems({ ...job, deliver_extra: { chat_id: { room: "ops-room-one" } } })).toEqual([
      `${FILE}: jobs.a1.deliver_extra.chat_id: expected text, a number or true/false (sent as written)`,
    ]);
    expect(problems({ ...job, deliver_extra: { thread_id: [7] } })).toEqual([
      `${FILE}: jobs.a1.deliver_extra.thread_id: expected text, a number or true/false (sent as written)`,
    ]);
    expect(problems({ ...job, created_at: true })).toEqual([
      `${FILE}: jobs.a1.created_at: expected an ISO time as text (or a number, epoch)`,
    ]);
    expect(problems({ ...job, deliver: "" })).toEqual([
      `${FILE}: jobs.a1.deliver: must not be empty — write a value, or leave the key out`,
    ]);
  });

  it("a next_run written as a number (Unix time) is refused with the ISO time to write, not 'put it in quotes'", () => {
    const problems = (raw: unknown) => {
      const parsed = parseCronJob(FILE, "a1", raw);
      return parsed.ok ? [] : parsed.problems;
    };
    const job = { name: "n", schedule: "every 1h", prompt: "p" };
    // Quoted, "1796131244000" would be no time either: the advice is the time itself, in ISO 8601.
    expect(problems({ ...job, next_run: 1796131244000 })).toEqual([
      `${FILE}: jobs.a1.next_run: expected a time as text, got 1796131244000 — write an ISO 8601 UTC time in quotes: "2026-12-01T13:20:44.000Z" if 1796131244000 is Unix time in milliseconds (or leave next_run out: it is set from the schedule)`,
    ]);
    expect(problems({ ...job, next_run: 1796131244 })).toEqual([
      `${FILE}: jobs.a1.next_run: expected a time as text, got 1796131244 — write an ISO 8601 UTC time in quotes: "2026-12-01T13:20:44.000Z" if 1796131244 is Unix time in seconds (or leave next_run out: it is set from the schedule)`,
    ]);
    expect(problems({ ...job, next_run: true })).toEqual([
      `${FILE}: jobs.a1.next_run: expected a time as text, got true — write an ISO 8601 UTC time in quotes, such as "2026-12-02T09:00:00Z" (or leave next_run out: it is set from the schedule)`,
    ]);
    // As svc writes it, or by hand without a zone (UTC): valid.
    expect(problems({ ...job, next_run: "2026-12-02T09:00:00Z" })).toEqual([]);
  });

  it("a broken last_run (only shown by svc cron list) is left out, not fatal, and said by file, key and problem", () => {
    const parsed = parseCronJob(FILE, "a1", { name: "n", schedule: "1h", prompt: "p", last_run: 5 });
    expect(parsed.ok && parsed.job.last_run).toBeUndefined();
    expect(parsed.ok && parsed.lastRunProblem).toBe(
      `${FILE}: jobs.a1.last_run: expected a mapping, got 5 (cron job n) — left out: svc cron list shows the job's last run as never until its next run records one; fix last_run in the file, or remove it`,
    );
    const trigger = parseCronJob(FILE, "a1", {
      name: "n",
      schedule: "1h",
      prompt: "p",
      last_run: { at: "2026-12-01T09:00:00Z", status: "ok", trigger: "cron" },
    });
    expect(trigger.ok && trigger.lastRunProblem).toContain(
      `${FILE}: jobs.a1.last_run.trigger: "cron" is no trigger svc writes — expected schedule, manual or webhook:<route>:<delivery id>`,
    );
    // As svc writes them: no problem.
    // A delivery ID is the sender's text: it may hold a line or paragraph separator.
    for (const trig of ["schedule", "manual", "webhook:deploys:d-1", "webhook:cj:abc\u2028def\u2029\n"]) {
      const last_run = { at: "2026-12-01T09:00:00.000Z", status: "error", trigger: trig, error: "boom" };
      const fine = parseCronJob(FILE, "a1", { name: "n", schedule: "1h", prompt: "p", last_run });
      expect(fine.ok && fine.job.last_run).toEqual(last_run);
      expect(fine.ok && fine.lastRunProblem).toBeUndefined();
    }
  });

  it("lookup by id or name finds an invalid record too, with its problems", () => {
    const records = { a1: { name: "n", schedule: 5, prompt: "p" }, b2: "x" };
    expect(lookupJob(FILE, records, "n")).toMatchObject({ ok: false, key: "a1", name: "n" });
    expect(lookupJob(FILE, records, "b2")).toMatchObject({ ok: false, key: "b2", name: undefined });
    expect(lookupJob(FILE, records, "constructor")).toBeUndefined();
    expect(jobRecords(FILE, records).map((record) => record.ok)).toEqual([false, false]);
  });
});
