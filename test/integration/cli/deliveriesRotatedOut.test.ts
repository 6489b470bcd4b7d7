import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import {
  createHistoryWriter,
  type HistoryRecord,
  historyDir,
} from "../../../src/io/stores/deliveryHistory.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * docs/cli.md: a duplicate (or a run) whose ID ran from a request the history no longer holds. A request
 * rotated out of the history (the generation dropped ended between the request and its run) is not said
 * to be a gateway killed before answering it; a run after the first record of the kept history is. The
 * history is written by the gateway's history writer, rotated as the gateway rotates it.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const ROUTE = "rotated-route";
const base = Date.now() - 3_600_000;
const at = (ms: number) => new Date(base + ms).toISOString();
const accepted = (id: string, ms: number): HistoryRecord => ({
  kind: "request",
  id,
  at: at(ms),
  route: ROUTE,
  status: 202,
  outcome: "accepted",
  event: "push",
  content_type: "application/json",
  payload_encoding: "utf8",
  payload: `{"id":"${id}"}`,
});
const duplicate = (id: string, ms: number): HistoryRecord => ({
  ...(accepted(id, ms) as Extract<HistoryRecord, { kind: "request" }>),
  status: 200,
  outcome: "duplicate",
  payload: `{"id":"${id}","retry":true}`,
});
const ran = (id: string, ms: number): HistoryRecord => ({
  kind: "run",
  id,
  at: at(ms),
  route: ROUTE,
  outcome: "ok",
  event: "push",
});

/** A run the gateway's history hooks record at `ms`, of a request it received at `receivedMs`. */
interface GatewayRun {
  readonly id: string;
  readonly ms: number;
  readonly receivedMs: number;
}
const gatewayRan = (id: string, ms: number, receivedMs: number): GatewayRun => ({ id, ms, receivedMs });

/**
 * A home whose history the writer rotated after each batch (a file of 1 byte at most): three generations,
 * the first dropped, `history.1.jsonl` holding the second and `history.jsonl` the third. A GatewayRun is
 * recorded as the gateway records a run's end (its history hooks, on a clock set to its time).
 */
function rotatedHome(generations: readonly (readonly (HistoryRecord | GatewayRun)[])[]): TempHome {
  const made = tempHome();
  made.write(
    "config.yaml",
    stringify(cliConfig({ [ROUTE]: { secret: "rotated-secret-7431" } }, { state: { backend: "local" } })),
    0o600,
  );
  const dir = historyDir(made.dir);
  const writer = createHistoryWriter(
    dir,
    (err) => {
      throw err;
    },
    Date.now,
    1,
  );
  let clock = base;
  const hooks = historyHooks(writer, () => clock);
  for (const records of generations) {
    for (const record of records) {
      if ("kind" in record) writer.record(record);
      else {
        clock = base + record.ms;
        hooks.run(
          { deliveryId: record.id, routeName: ROUTE, event: "push", receivedAt: base + record.receivedMs },
          undefined,
        );
      }
    }
    writer.flush();
  }
  writer.close();
  expect(readdirSync(dir).filter((name) => name.endsWith(".jsonl") && !name.startsWith("."))).toEqual([
    "history.1.jsonl",
    "history.jsonl",
  ]);
  return made;
}

describe("a request rotated out of the delivery history (state.backend: local)", { timeout: 60_000 }, () => {
  it("svc webhook deliveries says the duplicate's request was rotated out, not that a gateway was killed", async () => {
    // D1's request ends the dropped generation; its run begins the kept one.
    home = rotatedHome([
      [accepted("D1", 0)],
      [ran("D1", 5), accepted("other", 6)],
      [duplicate("D1", 60_000)],
    ]);
    const res = await svc(home, ["webhook", "deliveries"]);
    expect(res.code).toBe(0);
    const row = res.stdout.split("\n").find((line) => line.includes("200 duplicate")) ?? "";
    expect(row).toContain(
      "its delivery ID was received before: that request ran (the row of this ID with no request) and has been rotated out of the history since (records are kept 7 days, and no more than the last ~32 MiB of them), with the payload it ran with (this duplicate's may be another body), so it cannot be redelivered",
    );
    expect(res.stdout).not.toContain("killed");
    expect(res.stdout).not.toContain("payload is not kept");
    const filtered = await svc(home, ["webhook", "deliveries", "--id", "D1"]);
    expect(filtered.stdout).toContain("has been rotated out of the history since");
  });

  it("svc webhook redeliver says the request that ran was rotated out, and an ID listed only by its run is not 'not in the history'", async () => {
    home = rotatedHome([
      [accepted("D1", 0), accepted("big-3506", 1)],
      [ran("D1", 5), ran("big-3506", 5)],
      [duplicate("D1", 60_000)],
    ]);
    const dup = await svc(home, ["webhook", "redeliver", "D1", "--port", "9"]);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain(
      `delivery "D1" ran here (route ${ROUTE}: svc webhook deliveries --id D1 shows its run), but the request that ran has been rotated out of the history since (records are kept 7 days, and no more than the last ~32 MiB of them), with the payload it ran with; the history holds the ID only as a duplicate, which never ran and keeps a payload of its own that may be another body — it cannot be redelivered`,
    );
    expect(dup.stderr).not.toContain("killed");
    const listed = await svc(home, ["webhook", "deliveries", "--id", "big-3506"]);
    expect(listed.stdout).toMatch(/big-3506 .* request not in this history/);
    const alone = await svc(home, ["webhook", "redeliver", "big-3506", "--port", "9"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain(
      `delivery "big-3506" ran here (route ${ROUTE}: svc webhook deliveries --id big-3506 shows its run), but its request has been rotated out of the history since (records are kept 7 days, and no more than the last ~32 MiB of them), with its payload — it cannot be redelivered`,
    );
    expect(alone.stderr).not.toContain("in the recent history");
  });

  it("a run later than the first record kept still says the gateway was killed before answering", async () => {
    home = rotatedHome([
      [accepted("gone", 0)],
      [accepted("first-kept", 5), ran("first-kept", 6), ran("K1", 9), ran("K2", 10)],
      [duplicate("K1", 60_000)],
    ]);
    const res = await svc(home, ["webhook", "deliveries", "--id", "K1"]);
    expect(res.stdout).toContain(
      "by a gateway killed after recording the event and before its history recorded the request (before its 202 left, or just after): its run ran (the row of this ID with no request), and the payload it ran with was never kept (this duplicate's may be another body), so it cannot be redelivered",
    );
    expect(res.stdout).not.toContain("rotated out");
    const dup = await svc(home, ["webhook", "redeliver", "K1", "--port", "9"]);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain(
      "but its request is not in this history: the gateway was killed after recording the event and before its history recorded the request (before its 202 left, or just after), so the payload it ran with was never kept, and the sender's retry was answered as a duplicate, which never ran and keeps a payload of its own that may be another body — it cannot be redelivered",
    );
    const alone = await svc(home, ["webhook", "redeliver", "K2", "--port", "9"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain(
      `delivery "K2" ran here (route ${ROUTE}: svc webhook deliveries --id K2 shows its run), but its request is not in this history: the gateway was killed after recording the event and before its history recorded the request (before its 202 left, or just after), so the payload it ran with was never kept — it cannot be redelivered`,
    );
  });
});

describe("a run's request told rotated out or never answered by when it was received", {
  timeout: 60_000,
}, () => {
  const ROTATED =
    "its delivery ID was received before: that request ran (the row of this ID with no request) and has been rotated out of the history since";
  const KILLED = "by a gateway killed after recording the event and before its history recorded the request (before its 202 left, or just after)";

  it("a run that ended a few ms after the first kept record, of a request received before it, was rotated out", async () => {
    // At volume: D1's request ends the dropped generation, and its run ends after the kept one began.
    home = rotatedHome([
      [accepted("D1", 0), accepted("R2", 1)],
      [accepted("first-kept", 5), ran("first-kept", 6), gatewayRan("D1", 9, 0), gatewayRan("R2", 11, 1)],
      [duplicate("D1", 60_000)],
    ]);
    const res = await svc(home, ["webhook", "deliveries", "--id", "D1"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(ROTATED);
    expect(res.stdout).not.toContain("killed");
    const dup = await svc(home, ["webhook", "redeliver", "D1", "--port", "9"]);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain("but the request that ran has been rotated out of the history since");
    expect(dup.stderr).not.toContain("killed");
    const alone = await svc(home, ["webhook", "redeliver", "R2", "--port", "9"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("but its request has been rotated out of the history since");
    expect(alone.stderr).not.toContain("killed");
  });

  it("a request received after the first kept record, with no request line, was never answered", async () => {
    home = rotatedHome([
      [accepted("gone", 0)],
      [accepted("first-kept", 5), gatewayRan("K1", 9, 6), gatewayRan("K2", 10, 7)],
      [duplicate("K1", 60_000)],
    ]);
    const res = await svc(home, ["webhook", "deliveries", "--id", "K1"]);
    expect(res.stdout).toContain(KILLED);
    expect(res.stdout).not.toContain("rotated out");
    const alone = await svc(home, ["webhook", "redeliver", "K2", "--port", "9"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("but its request is not in this history: the gateway was killed");
  });

  it("a run an older svc recorded, with no receive time, is told apart by its own time as before", async () => {
    home = rotatedHome([
      [accepted("D1", 0), accepted("D2", 1)],
      [ran("D2", 4), accepted("first-kept", 5), ran("D1", 9)],
      [duplicate("D1", 60_000), duplicate("D2", 60_001)],
    ]);
    const later = await svc(home, ["webhook", "deliveries", "--id", "D1"]);
    expect(later.stdout).toContain(KILLED);
    const earlier = await svc(home, ["webhook", "deliveries", "--id", "D2"]);
    expect(earlier.stdout).toContain(ROTATED);
  });
});
