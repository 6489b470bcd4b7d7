import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * A newer version may record kinds of lines this one does not know (docs/operations.md: a history line it
 * cannot read is skipped). One before a direct delivery's request was taken as its delivery:
 * `svc webhook deliveries` showed `undefined undefined` in DELIVERY, and `--json` a delivery of `at` only.
 */
let home: TempHome;
afterEach(() => home.cleanup());

it("svc webhook deliveries skips a line of a kind it does not know: no delivery is made of it", async () => {
  home = tempHome();
  home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1" } } }));
  const at = new Date().toISOString();
  const lines = [
    { kind: "retry", id: "b", at, route: "pr", attempt: 2 },
    { kind: "request", id: "b", at, route: "pr", status: 200, outcome: "delivered" },
    { kind: "request", id: "c", at, route: "pr", status: 202, outcome: "accepted" },
    { kind: "run", id: "c", at, route: "pr", outcome: "ok" },
  ];
  home.write("deliveries/history.jsonl", lines.map((l) => `${JSON.stringify(l)}\n`).join(""), 0o600);
  const table = await svc(home, ["webhook", "deliveries"]);
  expect(table.code).toBe(0);
  expect(table.stdout).not.toContain("undefined");
  expect(table.stdout.split("\n")[2]).toMatch(/ b +pr +- +200 delivered +- +- *$/);
  const json = await svc(home, ["webhook", "deliveries", "--json"]);
  expect(
    (JSON.parse(json.stdout) as { id: string; delivery: unknown }[]).map((r) => [r.id, r.delivery]),
  ).toEqual([
    ["c", null],
    ["b", null],
  ]);
});
