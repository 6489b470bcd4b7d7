import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * A history line edited by hand (or by a tool) into a record whose fields have other types than the gateway
 * writes (docs/operations.md: a history line it cannot read is skipped). `svc webhook deliveries` failed on
 * the whole history with `svc: cell.replace is not a function` (exit 1), and `--json` printed the line as a
 * row (`"id": 5`); `redeliver` of the good records next to it must work as before.
 */
let home: TempHome;
afterEach(() => home.cleanup());

it("svc webhook deliveries and redeliver skip a line whose fields are not of the types the gateway writes", async () => {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({
      platforms: { webhook: { enabled: true, host: "127.0.0.1", routes: { pr: { secret: "s" } } } },
    }),
  );
  const at = new Date().toISOString();
  const good = { kind: "request", id: "good", at, route: "pr", status: 202, outcome: "accepted" };
  const lines = [
    good,
    { kind: "run", id: "good", at, route: "pr", outcome: "ok" },
    { ...good, id: 5 },
    { ...good, id: "event-number", event: 7 },
    { ...good, id: "no-status", status: "202" },
    { ...good, id: "route-less", route: null },
    { ...good, id: "reason-object", status: 401, outcome: "Invalid signature", reason: { x: 1 } },
    { ...good, id: "payload-number", payload: 12, payload_encoding: "utf8" },
    { kind: "run", id: "run-outcome", at, route: "pr", outcome: 1 },
    { kind: "delivery", id: "good", at, route: "pr", platform: ["log"], outcome: "ok" },
    { kind: "not_recorded", id: "-", at, route: "pr", since: at, count: 3, answers: "429 ×3" },
    { kind: "not_recorded", id: "-", at, route: "pr", since: at, count: 2, answers: [{ status: 429 }] },
  ];
  home.write("deliveries/history.jsonl", lines.map((l) => `${JSON.stringify(l)}\n`).join(""), 0o600);

  const table = await svc(home, ["webhook", "deliveries"]);
  expect(table).toMatchObject({ code: 0, stderr: "" });
  expect(table.stdout.trim().split("\n")).toHaveLength(2);
  expect(table.stdout.split("\n")[1]).toMatch(/ good +pr +- +202 accepted +ok +- *$/);

  const json = await svc(home, ["webhook", "deliveries", "--json"]);
  expect(json.code).toBe(0);
  expect((JSON.parse(json.stdout) as { id: unknown }[]).map((r) => r.id)).toEqual(["good"]);

  const payloadless = await svc(home, ["webhook", "redeliver", "payload-number"]);
  expect(payloadless.code).toBe(2);
  expect(payloadless.stderr).toContain('no delivery "payload-number"');
});
