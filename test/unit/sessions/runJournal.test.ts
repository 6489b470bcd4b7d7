import {
  appendFileSync,
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  createRunJournal,
  findRunSession,
  RUN_JOURNAL_DIR,
  type RunSession,
  runSessionLine,
} from "../../../src/io/sessions/runJournal.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

describe("webhook run sessions (journal)", () => {
  it("records a run as session webhook:<route>:<delivery_id> with the prompt and the reply", async () => {
    home = tempHome();
    const errors: unknown[] = [];
    const journal = createRunJournal(
      home.dir,
      (e) => errors.push(e),
      () => new Date("2026-11-22T10:00:00Z"),
    );
    journal.record({ route: "gh", deliveryId: "abc/../1", prompt: "Summarise PR", reply: "Looks good" });
    await journal.close();
    const session = findRunSession(home.dir, "webhook:gh:abc/../1");
    expect(session?.entries.map((e) => [e.role, e.content])).toEqual([
      ["user", "Summarise PR"],
      ["assistant", "Looks good"],
    ]);
    const file = join(home.dir, RUN_JOURNAL_DIR, "2026-11-22.jsonl");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(errors).toEqual([]);
  });

  it("starts a new journal file when the day changes and finds runs in older days", async () => {
    home = tempHome();
    let now = new Date("2026-11-22T23:59:59Z");
    const journal = createRunJournal(
      home.dir,
      () => {},
      () => now,
    );
    journal.record({ route: "gh", deliveryId: "1", prompt: "p1", reply: "r1" });
    now = new Date("2026-11-23T00:00:01Z");
    journal.record({ route: "gh", deliveryId: "2", prompt: "p2", reply: "r2" });
    await journal.close();
    expect(readFileSync(join(home.dir, RUN_JOURNAL_DIR, "2026-11-22.jsonl"), "utf8")).toContain(
      '"delivery_id":"1"',
    );
    expect(readFileSync(join(home.dir, RUN_JOURNAL_DIR, "2026-11-23.jsonl"), "utf8")).toContain(
      '"delivery_id":"2"',
    );
    expect(findRunSession(home.dir, "webhook:gh:1")?.entries[1]?.content).toBe("r1");
  });

  it("keeps 7 days of journals: older days (also ones a previous gateway left) are removed, nothing else", async () => {
    home = tempHome();
    const dir = join(home.dir, RUN_JOURNAL_DIR);
    mkdirSync(dir, { recursive: true });
    // Left by an earlier gateway, and files that are not day journals.
    for (const name of ["2025-01-01.jsonl", "notes.txt", "2026-01-01.jsonl.bak"])
      writeFileSync(join(dir, name), "x\n");
    let now = new Date("2026-11-01T12:00:00Z");
    const journal = createRunJournal(
      home.dir,
      () => {},
      () => now,
    );
    // A sender posting every day for 30 days: the directory must not keep growing with it.
    for (let day = 0; day < 30; day++) {
      now = new Date(Date.parse("2026-11-01T12:00:00Z") + day * 86_400_000);
      journal.record({ route: "gh", deliveryId: `d${day}`, prompt: "p".repeat(1000), reply: "r" });
      await new Promise((resolve) => setImmediate(resolve));
    }
    await journal.close();
    expect(readdirSync(dir).sort()).toEqual([
      "2026-01-01.jsonl.bak",
      "2026-11-23.jsonl",
      "2026-11-24.jsonl",
      "2026-11-25.jsonl",
      "2026-11-26.jsonl",
      "2026-11-27.jsonl",
      "2026-11-28.jsonl",
      "2026-11-29.jsonl",
      "2026-11-30.jsonl",
      "notes.txt",
    ]);
    expect(findRunSession(home.dir, "webhook:gh:d22")?.entries[1]?.content).toBe("r");
    expect(findRunSession(home.dir, "webhook:gh:d21")).toBeUndefined();
  });

  it("keeps every line of a burst, in order, and skips a torn last line", async () => {
    home = tempHome();
    const journal = createRunJournal(
      home.dir,
      () => {},
      () => new Date("2026-11-22T10:00:00Z"),
    );
    for (let i = 0; i < 2000; i++)
      journal.record({ route: "r", deliveryId: String(i), prompt: `p${i}`, reply: `r${i}` });
    await journal.close();
    const file = join(home.dir, RUN_JOURNAL_DIR, "2026-11-22.jsonl");
    appendFileSync(file, '{"key":"webhook:r:torn","entr');
    const ids = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .slice(0, -1)
      .map((l) => JSON.parse(l).delivery_id);
    expect(ids).toEqual(Array.from({ length: 2000 }, (_, i) => String(i)));
    expect(findRunSession(home.dir, "webhook:r:1999")?.entries[0]?.content).toBe("p1999");
    expect(findRunSession(home.dir, "webhook:r:torn")).toBeUndefined();
  });

  it("a journal left with a torn last line (a crash, a full disk) gets the next run on a line of its own", async () => {
    home = tempHome();
    const at = () => new Date("2026-11-22T10:00:00Z");
    const first = createRunJournal(home.dir, () => {}, at);
    first.record({ route: "r", deliveryId: "before", prompt: "p", reply: "r" });
    await first.close();
    const file = join(home.dir, RUN_JOURNAL_DIR, "2026-11-22.jsonl");
    appendFileSync(file, '{"key":"webhook:r:torn","entr');
    // The next gateway appends to the same day's journal.
    const second = createRunJournal(home.dir, () => {}, at);
    second.record({ route: "r", deliveryId: "after", prompt: "p2", reply: "r2" });
    await second.close();
    const lines = readFileSync(file, "utf8").split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[1]).toBe('{"key":"webhook:r:torn","entr');
    expect(JSON.parse(lines[2] as string).delivery_id).toBe("after");
    expect(findRunSession(home.dir, "webhook:r:after")?.entries[1]?.content).toBe("r2");
  });

  it("writes each line exactly as JSON.stringify of the session would", () => {
    const at = "2026-11-22T10:00:00.000Z";
    for (const [route, id, prompt, reply] of [
      ["gh", "1", "Summarise PR", "Looks good"],
      ["gh", "2", 'echo: "same"\n', 'echo: "same"\n'],
      ['r"q', "a/../\u2028", 'line\n"quoted"\t\\ \u0000 😀 \ud800', ""],
    ] as const) {
      const session: RunSession = {
        key: `webhook:${route}:${id}`,
        route,
        delivery_id: id,
        at,
        entries: [
          { role: "user", content: prompt, at },
          { role: "assistant", content: reply, at },
        ],
      };
      expect(runSessionLine(route, id, at, prompt, reply)).toBe(`${JSON.stringify(session)}\n`);
    }
  });

  it("writes a failed run without a reply as its prompt alone and why it failed, as JSON.stringify would", () => {
    const at = "2026-11-22T10:00:00.000Z";
    const session: RunSession = {
      key: "webhook:gh:failed-1",
      route: "gh",
      delivery_id: "failed-1",
      at,
      entries: [{ role: "user", content: 'Summarise "PR"', at }],
      error: "agent command was killed by SIGKILL (Forced termination)",
    };
    expect(runSessionLine("gh", "failed-1", at, 'Summarise "PR"', "", undefined, session.error)).toBe(
      `${JSON.stringify(session)}\n`,
    );
  });

  it("writes a batch without waiting for close", async () => {
    home = tempHome();
    const journal = createRunJournal(
      home.dir,
      () => {},
      () => new Date("2026-11-22T10:00:00Z"),
    );
    journal.record({ route: "gh", deliveryId: "early", prompt: "p", reply: "r" });
    await vi.waitFor(() =>
      expect(findRunSession(home.dir, "webhook:gh:early")?.entries[1]?.content).toBe("r"),
    );
    await journal.close();
  });
  it("narrows a sessions directory, its webhook-runs directory and the earlier days' journals that already existed wider (an older svc, a restored backup) to 0700 and 0600: they hold prompts and replies", async () => {
    home = tempHome();
    const runs = join(home.dir, "sessions", RUN_JOURNAL_DIR);
    mkdirSync(runs, { recursive: true });
    const earlier = join(runs, "2026-11-21.jsonl");
    writeFileSync(
      earlier,
      runSessionLine("gh", "old-1", "2026-11-21T10:00:00.000Z", "payload text", "reply"),
    );
    const chat = join(home.dir, "sessions", "telegram");
    mkdirSync(chat);
    for (const dir of [join(home.dir, "sessions"), runs, chat]) chmodSync(dir, 0o755);
    chmodSync(earlier, 0o644);
    const journal = createRunJournal(
      join(home.dir, "sessions"),
      (e) => {
        throw e;
      },
      () => new Date("2026-11-22T10:00:00Z"),
    );
    journal.record({ route: "gh", deliveryId: "new-1", prompt: "p", reply: "r" });
    await journal.close();
    expect(statSync(join(home.dir, "sessions")).mode & 0o777).toBe(0o700);
    expect(statSync(runs).mode & 0o777).toBe(0o700);
    expect(statSync(earlier).mode & 0o777).toBe(0o600);
    expect(statSync(join(runs, "2026-11-22.jsonl")).mode & 0o777).toBe(0o600);
  });
});
