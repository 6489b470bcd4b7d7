import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * docs/cli.md and docs/durability.md: a gateway killed after its journal recorded an event and before its
 * `202` reached the sender runs the event after its restart, with no request row in its history; the
 * sender's retry is answered `200 duplicate`. The history is written as the gateway writes it.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const at = new Date().toISOString();
const ROUTE = "killed-route";
const duplicate = JSON.stringify({
  kind: "request",
  id: "k-1",
  at,
  route: ROUTE,
  status: 200,
  outcome: "duplicate",
  event: "push",
  content_type: "application/json",
  payload_encoding: "utf8",
  payload: '{"v":1}',
});
const ran = JSON.stringify({ kind: "run", id: "k-1", at, route: ROUTE, outcome: "ok" });

function localHome(lines: readonly string[]): TempHome {
  const made = tempHome();
  made.write(
    "config.yaml",
    stringify(cliConfig({ [ROUTE]: { secret: "killed-secret-5521" } }, { state: { backend: "local" } })),
    0o600,
  );
  made.write("deliveries/history.jsonl", `${lines.join("\n")}\n`, 0o600);
  return made;
}

describe("an event whose gateway was killed before answering it (state.backend: local)", {
  timeout: 60_000,
}, () => {
  it("svc webhook deliveries says its duplicate's run ran, without offering a redeliver", async () => {
    home = localHome([ran, duplicate]);
    const res = await svc(home, ["webhook", "deliveries", "--id", "k-1"]);
    expect(res.code).toBe(0);
    const rows = res.stdout.split("\n").filter((line) => line.includes("k-1"));
    expect(rows).toHaveLength(2);
    const duplicateRow = rows.find((line) => line.includes("200 duplicate")) ?? "";
    expect(duplicateRow).toContain(
      "by a gateway killed after recording the event and before its history recorded the request (before its 202 left, or just after): its run ran (the row of this ID with no request), and the payload it ran with was never kept (this duplicate's may be another body), so it cannot be redelivered",
    );
    expect(res.stdout).not.toContain("svc webhook redeliver");
  });

  it("svc webhook redeliver says the gateway was killed before answering it, not that its records expired", async () => {
    home = localHome([ran, duplicate]);
    const res = await svc(home, ["webhook", "redeliver", "k-1", "--port", "9"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `delivery "k-1" ran here (route ${ROUTE}: svc webhook deliveries --id k-1 shows its run), but its request is not in this history: the gateway was killed after recording the event and before its history recorded the request (before its 202 left, or just after), so the payload it ran with was never kept, and the sender's retry was answered as a duplicate, which never ran and keeps a payload of its own that may be another body — it cannot be redelivered`,
    );
    expect(res.stderr).not.toContain("records are kept 7 days");
  });

  it("a duplicate whose ID ran from a request in the history still offers svc webhook redeliver", async () => {
    const accepted = JSON.stringify({
      ...JSON.parse(duplicate),
      status: 202,
      outcome: "accepted",
    });
    home = localHome([accepted, ran, duplicate]);
    const res = await svc(home, ["webhook", "deliveries", "--id", "k-1"]);
    expect(res.stdout).toContain("svc webhook redeliver k-1 runs it again");
    expect(res.stdout).not.toContain("killed after recording");
  });
});
