import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  HISTORY_RETENTION_MS,
  type HistoryRecord,
  historyLine,
} from "../../../src/io/stores/deliveryHistory.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * docs/cli.md: records past the 7 days that a history still holds (a quiet gateway's file, never rotated)
 * are only skipped, never dropped: a run of a request received since, with no request line, is a gateway
 * killed before answering, not a request rotated out. A request received more than 7 days ago, or no later
 * than the first record of a rotated history.1.jsonl (at any age), may have left the history. Records are
 * written with times relative to the clock the command reads.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const ROTATED =
  "its delivery ID was received before: that request ran (the row of this ID with no request) and has been rotated out of the history since";
const KILLED = "by a gateway killed after recording the event and before its history recorded the request (before its 202 left, or just after)";
const MINUTE = 60_000;
const DAY = 86_400_000;

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const request = (id: string, msAgo: number, outcome: "accepted" | "duplicate"): HistoryRecord => ({
  kind: "request",
  id,
  at: ago(msAgo),
  route: "pr",
  status: outcome === "accepted" ? 202 : 200,
  outcome,
  content_type: "application/json",
  payload_encoding: "utf8",
  payload: `{"id":"${id}"}`,
});
const run = (id: string, msAgo: number, receivedMsAgo?: number): HistoryRecord => ({
  kind: "run",
  id,
  at: ago(msAgo),
  route: "pr",
  outcome: "ok",
  ...(receivedMsAgo === undefined ? {} : { received_at: Date.now() - receivedMsAgo }),
});

function historyHome(files: {
  current: readonly HistoryRecord[];
  previous?: readonly HistoryRecord[];
}): TempHome {
  const made = tempHome();
  made.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s" } })));
  const text = (records: readonly HistoryRecord[]) => records.map((r) => `${historyLine(r)}\n`).join("");
  if (files.previous !== undefined) made.write("deliveries/history.1.jsonl", text(files.previous), 0o600);
  made.write("deliveries/history.jsonl", text(files.current), 0o600);
  return made;
}

describe("a history that starts with records past the 7 days (state.backend: local)", {
  timeout: 60_000,
}, () => {
  it("a run received 10 minutes ago, with no request line, in a history never rotated: killed before answering", async () => {
    home = historyHome({
      current: [
        request("old1", HISTORY_RETENTION_MS + DAY, "accepted"),
        run("old1", HISTORY_RETENTION_MS + DAY),
        run("X", 10 * MINUTE, 10 * MINUTE),
        request("X", 6 * MINUTE, "duplicate"),
      ],
    });
    const listed = await svc(home, ["webhook", "deliveries", "--id", "X"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(KILLED);
    expect(listed.stdout).not.toContain("rotated out");
    const dup = await svc(home, ["webhook", "redeliver", "X", "--port", "9"]);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain("but its request is not in this history: the gateway was killed");
    expect(dup.stderr).not.toContain("rotated out");
  });

  it("a run alone of an older svc (no receive time), within the 7 days: killed before answering", async () => {
    home = historyHome({
      current: [request("old1", HISTORY_RETENTION_MS + DAY, "accepted"), run("Y", 10 * MINUTE)],
    });
    const alone = await svc(home, ["webhook", "redeliver", "Y", "--port", "9"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("but its request is not in this history: the gateway was killed");
  });

  it("a request received more than 7 days ago, whose run ended within them, may have left the history", async () => {
    home = historyHome({
      current: [
        request("old1", HISTORY_RETENTION_MS + DAY, "accepted"),
        run("L", 10 * MINUTE, HISTORY_RETENTION_MS + MINUTE),
      ],
    });
    const alone = await svc(home, ["webhook", "redeliver", "L", "--port", "9"]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("but its request has been rotated out of the history since");
  });

  it("with history.1.jsonl, the cut is its first record at any age, not the first within the 7 days", async () => {
    home = historyHome({
      previous: [
        request("gone-before", HISTORY_RETENTION_MS + DAY, "accepted"),
        request("recent", 1 * DAY, "accepted"),
      ],
      current: [
        // Received after the rotated file's first record: its request, had it been answered, is kept.
        run("K", 10 * MINUTE, 2 * DAY),
        request("K", 6 * MINUTE, "duplicate"),
        // Received before it (so past the 7 days too): its request may have left the history.
        run("R", 9 * MINUTE, HISTORY_RETENTION_MS + DAY + MINUTE),
        request("R", 5 * MINUTE, "duplicate"),
      ],
    });
    const killed = await svc(home, ["webhook", "deliveries", "--id", "K"]);
    expect(killed.stdout).toContain(KILLED);
    expect(killed.stdout).not.toContain("rotated out");
    const rotated = await svc(home, ["webhook", "deliveries", "--id", "R"]);
    expect(rotated.stdout).toContain(ROTATED);
  });
});
