import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { HISTORY_RETENTION_MS, historyLine } from "../../../src/io/stores/deliveryHistory.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * docs/cli.md: a history that holds records, all older than the 7 days they are kept, is said to hold none
 * of the last 7 days, not pointed at platforms.webhook.delivery_history. Records written with old times.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

function oldHome(): TempHome {
  const made = tempHome();
  made.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s" }, ci: { secret: "t" } })));
  const old = new Date(Date.now() - HISTORY_RETENTION_MS - 86_400_000).toISOString();
  const lines = [
    { kind: "request", id: "old-1", at: old, route: "pr", status: 202, outcome: "accepted" },
    { kind: "run", id: "old-1", at: old, route: "pr", outcome: "ok" },
  ] as const;
  made.write("deliveries/history.jsonl", lines.map((l) => `${historyLine(l)}\n`).join(""), 0o600);
  return made;
}

it("says none is in the last 7 days when every record is older, for the route that has them", async () => {
  home = oldHome();
  const all = await svc(home, ["webhook", "deliveries"]);
  expect(all).toMatchObject({
    code: 0,
    stdout:
      "No deliveries recorded: none in the last 7 days (records are kept 7 days; the history holds only older ones).\n",
  });
  const pr = await svc(home, ["webhook", "deliveries", "pr"]);
  expect(pr.stdout).toBe(
    "No deliveries recorded for pr: none in the last 7 days (records are kept 7 days; the history holds only older ones).\n",
  );
  const json = await svc(home, ["webhook", "deliveries", "--json"]);
  expect(json).toMatchObject({ code: 0, stdout: "[]\n" });
  expect(json.stderr).toContain("Note: no deliveries recorded: none in the last 7 days");
  // A route with no record at all, old or new: as before.
  const ci = await svc(home, ["webhook", "deliveries", "ci"]);
  expect(ci.stdout).toBe(
    "No deliveries recorded for ci (the gateway records them with platforms.webhook.delivery_history, on by default).\n",
  );
});
