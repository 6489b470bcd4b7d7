import { createHash } from "node:crypto";
import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { historyLine } from "../../../src/io/stores/deliveryHistory.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * `svc webhook deliveries --status/--id/--since/--until/--route`: combinable filters over the recorded
 * history; a value none of the accepted forms is refused (exit 2) naming the option and those forms.
 */
let home: TempHome;
afterEach(() => home.cleanup());

function withHistory(): void {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({
      platforms: {
        webhook: { enabled: true, host: "127.0.0.1", routes: { pr: { secret: "s" }, ci: { secret: "t" } } },
      },
    }),
  );
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
  const lines = [
    { kind: "request", id: "old-401", at: at(300), route: "pr", status: 401, outcome: "Invalid signature" },
    { kind: "request", id: "old-ok", at: at(240), route: "pr", status: 202, outcome: "accepted" },
    { kind: "run", id: "old-ok", at: at(239), route: "pr", outcome: "ok" },
    { kind: "request", id: "ci-1", at: at(30), route: "ci", status: 202, outcome: "accepted" },
    { kind: "request", id: "new-401", at: at(20), route: "pr", status: 401, outcome: "Invalid signature" },
    { kind: "request", id: "new-ok", at: at(10), route: "pr", status: 202, outcome: "accepted" },
    { kind: "run", id: "new-ok", at: at(9), route: "pr", outcome: "failed", error: "boom" },
  ] as const;
  home.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
}

const ids = async (args: string[]) => {
  const res = await svc(home, ["webhook", "deliveries", ...args, "--json"]);
  expect(res).toMatchObject({ code: 0 });
  return (JSON.parse(res.stdout) as { id: string }[]).map((r) => r.id);
};

it("keeps the rows every filter given matches, each request with its own run", async () => {
  withHistory();
  expect(await ids(["--status", "4xx"])).toEqual(["new-401", "old-401"]);
  expect(await ids(["--status", "401", "--since", "1h"])).toEqual(["new-401"]);
  expect(await ids(["--status", "accepted", "--route", "pr"])).toEqual(["new-ok", "old-ok"]);
  expect(await ids(["pr", "--until", "2h"])).toEqual(["old-ok", "old-401"]);
  expect(await ids(["--id", "new-ok"])).toEqual(["new-ok"]);
  const row = await svc(home, ["webhook", "deliveries", "--id", "new-ok", "--since", "2026-01-01"]);
  expect(row.stdout).toMatch(/new-ok +pr +- +202 accepted +failed +- +run failed: boom/);
  const none = await svc(home, ["webhook", "deliveries", "ci", "--status", "401"]);
  expect(none).toMatchObject({ code: 0 });
  expect(none.stdout).toBe(
    "No recorded deliveries match route ci, --status 401 (svc webhook deliveries ci without the other filters lists the recent ones; records are kept 7 days).\n",
  );
  const json = await svc(home, ["webhook", "deliveries", "--status", "ignored", "--json"]);
  expect(json).toMatchObject({ code: 0, stdout: "[]\n" });
  expect(json.stderr).toContain(
    "Note: no recorded deliveries match --status ignored (svc webhook deliveries without them lists",
  );
});

it("--until the time a row shows (to the second), a minute or a date keeps all of it: paging by the shown time loses no row", async () => {
  home = tempHome();
  home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s" } })));
  const base = Date.now() - 3_600_000 - (Date.now() % 60_000);
  const at = (ms: number) => new Date(base + ms).toISOString();
  const lines = [
    { kind: "request", id: "s0-000", at: at(0), route: "pr", status: 202, outcome: "accepted" },
    { kind: "request", id: "s0-500", at: at(500), route: "pr", status: 202, outcome: "accepted" },
    { kind: "request", id: "s0-999", at: at(999), route: "pr", status: 202, outcome: "accepted" },
    { kind: "request", id: "s1-000", at: at(1000), route: "pr", status: 202, outcome: "accepted" },
    { kind: "request", id: "m1", at: at(60_000), route: "pr", status: 202, outcome: "accepted" },
  ] as const;
  home.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
  const second = new Date(base).toISOString().replace(".000Z", "Z");
  expect(await ids(["--until", second])).toEqual(["s0-999", "s0-500", "s0-000"]);
  expect(await ids(["--since", second, "--until", second])).toEqual(["s0-999", "s0-500", "s0-000"]);
  expect(await ids(["--until", second.replace("Z", ".5Z")])).toEqual(["s0-500", "s0-000"]);
  expect(await ids(["--until", second.replace("Z", ".000Z")])).toEqual(["s0-000"]);
  expect(await ids(["--until", second.replace(":00Z", "Z")])).toEqual([
    "s1-000",
    "s0-999",
    "s0-500",
    "s0-000",
  ]);
  // A date: its whole day (m1 may fall on the next one, a minute later).
  expect(await ids(["--since", second.slice(0, 10), "--until", second.slice(0, 10)])).toEqual(
    expect.arrayContaining(["s1-000", "s0-999", "s0-500", "s0-000"]),
  );
});

it("refuses a value none of the forms, naming the option and the forms it takes (exit 2)", async () => {
  withHistory();
  const cases: [string[], RegExp][] = [
    [
      ["--status", "teapot"],
      /--status: expected an HTTP status such as 401, a class such as 4xx, or an answer's outcome \(accepted, .*\); got "teapot"/,
    ],
    [["--status", "700"], /--status: expected .*got "700"/],
    [
      ["--since", "yesterday"],
      /--since: expected a time such as 2026-12-01T12:00:00Z.*a time ago such as 90s, 30m, 2h or 7d; got "yesterday"/,
    ],
    [["--until", "2026-02-30"], /--until: expected .*got "2026-02-30"/],
    [["--since", "2026-12-01T12:00:00"], /--since: expected .*got "2026-12-01T12:00:00"/],
    [["--since", "1h", "--until", "2h"], /--since 1h is after --until 2h .* swap them/],
    [
      ["pr", "--route", "ci"],
      /two routes given: "pr" as the argument and "ci" with --route — give one of them/,
    ],
    [["--id", ""], /--id: expected a delivery ID/],
  ];
  for (const [args, message] of cases) {
    const res = await svc(home, ["webhook", "deliveries", ...args]);
    expect(res.code, args.join(" ")).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stdout).toBe("");
  }
});

it("with delivery_history off, a filter that matches nothing says why nothing is recorded", async () => {
  withHistory();
  home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s" } }, { delivery_history: false })));
  const res = await svc(home, ["webhook", "deliveries", "--status", "ignored"]);
  expect(res).toMatchObject({ code: 0 });
  expect(res.stdout).toContain("platforms.webhook.delivery_history is false in");
});

it("--id takes the ID as deliveries shows it (escaped) and as the sender sent one longer than the gateway keeps", async () => {
  withHistory();
  const at = new Date().toISOString();
  const long = `long-${"x".repeat(250)}`;
  const digest = `sha256:${createHash("sha256").update(long, "utf8").digest("hex")}`;
  const lines = [
    { kind: "request", id: "bidi\u202eid", at, route: "pr", status: 202, outcome: "accepted" },
    { kind: "request", id: digest, at, route: "pr", status: 202, outcome: "accepted" },
  ] as const;
  home.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
  expect(await ids(["--id", "bidi\\u202eid"])).toEqual(["bidi\u202eid"]);
  expect(await ids(["--id", long])).toEqual([digest]);
});
