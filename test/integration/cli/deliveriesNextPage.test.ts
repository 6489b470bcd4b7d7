import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { historyLine } from "../../../src/io/stores/deliveryHistory.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * docs/cli.md: paging through a second that holds more rows than --limit. `--until` the last row's TIME
 * lists the same rows again; the note on stderr gives the next page with `--before <delivery id>` (and
 * `--skip` the rows shown after that ID's row), so no row shown is listed again.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const base = Date.now() - 3_600_000 - (Date.now() % 1000);
const at = (ms: number) => new Date(base + ms).toISOString();
const second = new Date(base).toISOString().replace(".000Z", "Z");

function busySecond(): TempHome {
  const made = tempHome();
  made.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s" } })));
  const lines = [
    { kind: "request", id: "before", at: at(-5_000), route: "pr", status: 202, outcome: "accepted" },
    // Eight requests in one second; r3 is also answered later as a duplicate of its ID.
    ...Array.from({ length: 8 }, (_, i) => ({
      kind: "request" as const,
      id: `r${i}`,
      at: at(i * 100),
      route: "pr",
      status: 202,
      outcome: "accepted",
    })),
    { kind: "request", id: "r3", at: at(950), route: "pr", status: 200, outcome: "duplicate" },
  ] as const;
  made.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
  return made;
}

const page = async (args: readonly string[]) => {
  const res = await svc(home as TempHome, ["webhook", "deliveries", ...args, "--json"]);
  expect(res.code).toBe(0);
  return { ids: (JSON.parse(res.stdout) as { id: string }[]).map((r) => r.id), stderr: res.stderr };
};

it("--before the last row's delivery ID pages on through a second --until cannot get past, as the note says", async () => {
  home = busySecond();
  const first = await page(["--limit", "3", "--until", second]);
  expect(first.ids).toEqual(["r3", "r7", "r6"]);
  // The same three again: --until takes in the whole second.
  expect((await page(["--limit", "3", "--until", second])).ids).toEqual(["r3", "r7", "r6"]);
  expect(first.stderr).toBe(
    `Note: more rows share the last row's time (${second}) than --limit 3 shows (--until ${second} would list these again) — the next page: svc webhook deliveries --limit 3 --until ${second} --json --before r6\n`,
  );
  const second2 = await page(["--limit", "3", "--until", second, "--before", "r6"]);
  expect(second2.ids).toEqual(["r5", "r4", "r3"]);
  // r3's newest row is its duplicate, on the first page: --before r3 would list r7 on again, so the page
  // is given from r4, past r3, shown after it.
  expect(second2.stderr).toContain("the next page: svc webhook deliveries --limit 3 --until");
  expect(second2.stderr).toContain("--before r4 --skip 1\n");
  expect((await page(["--limit", "3", "--until", second, "--before", "r3"])).ids).toEqual(["r7", "r6", "r5"]);
  const third = await page(["--limit", "3", "--until", second, "--before", "r4", "--skip", "1"]);
  expect(third.ids).toEqual(["r2", "r1", "r0"]);
  // The next row, `before`, is of another second: no note.
  expect(third.stderr).toBe("");
  const last = await page(["--limit", "3", "--until", second, "--before", "r1"]);
  expect(last.ids).toEqual(["r0", "before"]);
  expect(last.stderr).toBe("");
  // The table: the note on stderr, the rows on stdout.
  const table = await svc(home, ["webhook", "deliveries", "pr", "--limit", "2", "--before", "r5"]);
  expect(table.stdout.split("\n").filter((l) => / r[0-9] /.test(l))).toHaveLength(2);
  expect(table.stderr).toContain("the next page: svc webhook deliveries pr --limit 2 --before r4 --skip 1\n");
});

it("rows without a delivery ID (-) shown last are not listed again: the next page skips them past the last ID's row", async () => {
  home = tempHome();
  home.write("config.yaml", stringify(webhookConfig({ f1: { secret: "s" } })));
  // One second: two IDs, and refused requests that had none (the gateway records them as -).
  const refused = (ms: number) =>
    ({
      kind: "request",
      id: "-",
      at: at(ms),
      route: "f1",
      status: 401,
      outcome: "Invalid signature",
    }) as const;
  const request = (id: string, ms: number) =>
    ({ kind: "request", id, at: at(ms), route: "f1", status: 202, outcome: "accepted" }) as const;
  const lines = [
    request("a0", 0),
    refused(100),
    refused(150),
    refused(200),
    request("a1", 300),
    refused(400),
    request("a2", 500),
  ];
  home.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
  const times = async (args: readonly string[]) => {
    const res = await svc(home as TempHome, ["webhook", "deliveries", "f1", ...args, "--json"]);
    expect(res.code).toBe(0);
    return {
      rows: (JSON.parse(res.stdout) as { id: string; at: string }[]).map((r) => `${r.id}@${r.at}`),
      stderr: res.stderr,
    };
  };
  const all = (await times(["--limit", "10"])).rows;
  expect(all).toHaveLength(7);
  const seen: string[] = [];
  let args: readonly string[] = ["--limit", "2"];
  for (let pages = 0; pages < 7; pages++) {
    const { rows, stderr } = await times(args);
    seen.push(...rows);
    const next = /the next page: svc webhook deliveries f1 (.*)\n$/.exec(stderr)?.[1];
    if (next === undefined) break;
    args = next.split(" ").filter((word) => word !== "--json");
  }
  // Every row once, in order: none shown again, none left out.
  expect(seen).toEqual(all);
  // The first page ends with a - row, shown after a2's: the next page starts past it.
  const first = await times(["--limit", "2"]);
  expect(first.rows.map((r) => r.split("@")[0])).toEqual(["a2", "-"]);
  expect(first.stderr).toContain("--before a2 --skip 1\n");
  // A page of - rows alone pages on from the same --before, past the rows shown since it.
  const dashes = await times(["--limit", "2", "--before", "a1", "--skip", "1"]);
  expect(dashes.rows.map((r) => r.split("@")[0])).toEqual(["-", "-"]);
  expect(dashes.stderr).toContain("--before a1 --skip 3\n");
  // Past the last row: said so, not as a history with nothing recorded.
  const past = await svc(home, ["webhook", "deliveries", "f1", "--skip", "7"]);
  expect(past.stdout).toBe("No more rows: --skip 7 passes all 7 that match.\n");
  const bad = await svc(home, ["webhook", "deliveries", "f1", "--skip", "-1"]);
  expect(bad.code).toBe(2);
});

it("no note when the limit ends with a second of its own; --before an ID with no row lists none; - is refused", async () => {
  home = busySecond();
  expect((await page(["--limit", "9"])).stderr).toBe("");
  const none = await svc(home, ["webhook", "deliveries", "--before", "nope"]);
  expect(none.stdout).toContain("No recorded deliveries match --before nope");
  const dash = await svc(home, ["webhook", "deliveries", "--before", "-"]);
  expect(dash.code).toBe(2);
  expect(dash.stderr).toContain('--before: "-" is not a delivery ID');
});

it("a last row that is not its ID's newest (a duplicate newer, another route's row) gets the next page, so --before neither cycles nor leaves rows out", async () => {
  home = tempHome();
  home.write("config.yaml", stringify(webhookConfig({ rl: { secret: "s" }, hf: { secret: "s" } })));
  const request = (id: string, s: number, route = "rl", outcome = "accepted", status = 202) =>
    ({ kind: "request", id, at: at(s * 1000), route, status, outcome }) as const;
  // One ID reaching two routes, the other route's row newer; then X, o0..o3 a second apart, X again.
  const lines = [
    request("old", -20),
    request("multi-1", -10),
    request("multi-1", -10, "hf", "ignored", 200),
    request("loop-X", 0),
    ...[0, 1, 2, 3].map((i) => request(`loop-o${i}`, i + 1)),
    request("loop-X", 5, "rl", "duplicate", 200),
  ];
  home.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
  const o1 = await page(["--limit", "3", "--before", "loop-o2"]);
  expect(o1.ids).toEqual(["loop-o1", "loop-o0", "loop-X"]);
  // --before loop-X pages from the duplicate, listed first: the note gives the page past the last row.
  expect(o1.stderr).toBe(
    `Note: --before loop-X would page from that ID's newest row (${at(5000).replace(".000Z", "Z")}, route rl, which this listing leaves out), not from the last row shown — the next page: svc webhook deliveries --limit 3 --json --before loop-o0 --skip 1\n`,
  );
  expect((await page(["--limit", "3", "--before", "loop-X"])).ids).toEqual(["loop-o3", "loop-o2", "loop-o1"]);
  const on = await page(["--limit", "3", "--before", "loop-o0", "--skip", "1"]);
  expect(on.ids).toEqual(["multi-1", "multi-1", "old"]);
  expect(on.stderr).toBe("");
  // With a filter: the same.
  const accepted = await page(["--status", "accepted", "--limit", "2", "--before", "loop-o1"]);
  expect(accepted.ids).toEqual(["loop-o0", "loop-X"]);
  expect(accepted.stderr).toContain(
    "the next page: svc webhook deliveries --limit 2 --status accepted --json --before loop-o0 --skip 1\n",
  );
  expect(
    (await page(["--status", "accepted", "--limit", "2", "--before", "loop-o0", "--skip", "1"])).ids,
  ).toEqual(["multi-1", "old"]);
  // An ID another route's row of which is newer: --before it pages from that row.
  const rl = await svc(home, [
    "webhook",
    "deliveries",
    "rl",
    "--limit",
    "1",
    "--before",
    "loop-o0",
    "--skip",
    "1",
    "--json",
  ]);
  expect(rl.code).toBe(0);
  expect((JSON.parse(rl.stdout) as { id: string }[]).map((r) => r.id)).toEqual(["multi-1"]);
  expect(rl.stderr).toContain("--before multi-1 would page from that ID's newest row");
  expect(rl.stderr).toContain("route hf, which this listing leaves out");
  expect(rl.stderr).toContain(
    "the next page: svc webhook deliveries rl --limit 1 --json --before loop-o0 --skip 2\n",
  );
  // Paged by the notes alone, every row once.
  const all = (await page(["--limit", "20"])).ids;
  const seen: string[] = [];
  let args: readonly string[] = ["--limit", "2"];
  for (let pages = 0; pages < 10; pages++) {
    const { ids, stderr } = await page(args);
    seen.push(...ids);
    const next = /the next page: svc webhook deliveries (.*)\n$/.exec(stderr)?.[1];
    if (next === undefined) {
      if (ids.length === 2) args = ["--limit", "2", "--before", ids[1] as string];
      else break;
      continue;
    }
    args = next.split(" ").filter((word) => word !== "--json");
  }
  expect(seen).toEqual(all);
});

it("two rows of one ID and route in one millisecond are told apart: the older shown last gets the next page, and no row is listed again", async () => {
  home = tempHome();
  home.write("config.yaml", stringify(webhookConfig({ a: { secret: "s" } })));
  const request = (id: string, ms: number, outcome = "ignored") =>
    ({ kind: "request", id, at: at(ms), route: "a", status: 200, outcome }) as const;
  // X ignored, then answered as a duplicate of itself within the same millisecond; a refused request (-)
  // before them.
  const lines = [
    request("o1", 0),
    request("o2", 2000),
    request("o3", 4000),
    {
      kind: "request",
      id: "-",
      at: at(5000),
      route: "a",
      status: 401,
      outcome: "Invalid signature",
    } as const,
    request("X", 6000),
    request("X", 6000, "duplicate"),
    request("n1", 9000),
  ];
  home.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
  const first = await page(["--limit", "3"]);
  expect(first.ids).toEqual(["n1", "X", "X"]);
  // --before X pages from the duplicate, shown above the last row: it would list the last row again.
  expect(first.stderr).toBe(
    `Note: --before X would page from that ID's newest row (${at(6000).replace(".000Z", "Z")}, route a, shown above), not from the last row shown — the next page: svc webhook deliveries --limit 3 --json --before X --skip 1\n`,
  );
  expect((await page(["--limit", "3", "--before", "X"])).ids).toEqual(["X", "-", "o3"]);
  const on = await page(["--limit", "3", "--before", "X", "--skip", "1"]);
  expect(on.ids).toEqual(["-", "o3", "o2"]);
  // The older X shown, not the newer: no --before names a row shown to page from (--before X would list
  // the - row again).
  const older = await page(["--limit", "2", "--skip", "2"]);
  expect(older.ids).toEqual(["X", "-"]);
  expect(older.stderr).toBe(
    "Note: the last row shown has no delivery ID for --before to page from — the next page: svc webhook deliveries --limit 2 --json --skip 4 (rows recorded meanwhile shift it)\n",
  );
  // Filtered (by route) the same; and paged by the notes alone, every row once.
  expect((await page(["--route", "a", "--limit", "3"])).stderr).toContain(
    "the next page: svc webhook deliveries a --limit 3 --json --before X --skip 1\n",
  );
  const all = (await page(["--limit", "20"])).ids;
  const seen: string[] = [];
  let args: readonly string[] = ["--limit", "3"];
  for (let pages = 0; pages < 7; pages++) {
    const { ids, stderr } = await page(args);
    seen.push(...ids);
    const next = /the next page: svc webhook deliveries (.*)\n$/.exec(stderr)?.[1];
    if (next === undefined) {
      if (ids.length === 3) args = ["--limit", "3", "--before", ids[2] as string];
      else break;
      continue;
    }
    args = next.split(" ").filter((word) => word !== "--json");
  }
  expect(seen).toEqual(all);
});
