/**
 * `node --import tsx bench/historyRead.ts`: the delivery history's readers on a full history. Writes
 * `history.1.jsonl` and `history.jsonl` of 16 MiB each (the size cap: small records of an agent route —
 * request, run, delivery — with a refused request now and then, and a direct route), then times, each in
 * a fresh process (its wall time and peak RSS), what `svc webhook deliveries --limit 3`,
 * `svc webhook deliveries <route>` and `svc webhook redeliver <id>` read: the whole-file read they did
 * (`readHistory`, then summarized or filtered), and the readers they use now. The filters of
 * `svc webhook deliveries` likewise (`filteredDeliveries` against the naive whole-file filter): one many
 * rows match (`--status 401`, the newest 20 found near the end), and ones few or none match, which read
 * the whole history: `--id <an ID in the middle>`, `--route alerts --status 5xx` (none) and `--until <the
 * oldest hour>` (rows only at the start of the older file). Peak RSS is what the filters' bounded memory
 * is measured by: the naive read holds every record of both files.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  HISTORY_FILE,
  HISTORY_FILE_BYTES,
  HISTORY_PREVIOUS_FILE,
  type HistoryRecord,
  historyLine,
  historyOfIds,
  readHistory,
  recentDeliveries,
  summarizeHistory,
} from "../src/io/stores/deliveryHistory.js";
import {
  type DeliveryFilter,
  filteredDeliveries,
  summaryMatches,
} from "../src/io/stores/filteredDeliveries.js";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const [, , mode, dir] = process.argv;

function generate(into: string): string {
  let n = 0;
  let at = NOW - 3 * 24 * 3600 * 1000;
  const next = (): HistoryRecord[] => {
    n++;
    at += 1000;
    const stamp = new Date(at).toISOString();
    const id = `d-${n.toString(16).padStart(8, "0")}-1f3a-4c2b-9e77`;
    if (n % 10 === 0)
      return [{ kind: "request", id: "-", at: stamp, route: "github", status: 401, outcome: "unauthorized" }];
    if (n % 7 === 0)
      return [
        { kind: "delivery", id, at: stamp, route: "alerts", platform: "slack", outcome: "ok" },
        {
          kind: "request",
          id,
          at: stamp,
          route: "alerts",
          status: 200,
          outcome: "delivered",
          event: "alert",
        },
      ];
    return [
      {
        kind: "request",
        id,
        at: stamp,
        route: "github",
        status: 202,
        outcome: "accepted",
        event: "pull_request",
        content_type: "application/json",
        payload: `{"action":"opened","number":${n}}`,
        payload_encoding: "json",
      },
      { kind: "run", id, at: stamp, route: "github", outcome: "ok" },
      { kind: "delivery", id, at: stamp, route: "github", platform: "slack", outcome: "ok" },
    ];
  };
  let middle = "";
  for (const name of [HISTORY_PREVIOUS_FILE, HISTORY_FILE]) {
    const lines: string[] = [];
    let bytes = 0;
    while (bytes < HISTORY_FILE_BYTES) {
      for (const record of next()) {
        const line = `${historyLine(record)}\n`;
        lines.push(line);
        bytes += line.length;
      }
      if (name === HISTORY_PREVIOUS_FILE && bytes > HISTORY_FILE_BYTES / 2 && middle === "")
        middle = `d-${n.toString(16).padStart(8, "0")}-1f3a-4c2b-9e77`;
    }
    writeFileSync(join(into, name), lines.join(""));
  }
  return middle;
}

/** The filters the bench reads with (`id`: the delivery ID in the middle of the older file). */
function filterOf(which: string, id: string): DeliveryFilter {
  switch (which) {
    case "status":
      return { status: { code: 401 } };
    case "id":
      return { id: (each) => each === id };
    case "none":
      return { route: "alerts", status: { class: 5 } };
    case "until":
      return { until: NOW - 3 * 24 * 3600 * 1000 + 3600 * 1000 };
    default:
      throw new Error(`unknown filter ${which}`);
  }
}

function run(which: string, from: string, id: string): string {
  const filtered = /^(before|after)-filter-(\w+)$/.exec(which);
  if (filtered !== null) {
    const filter = filterOf(filtered[2] as string, id);
    return filtered[1] === "before"
      ? `${
          summarizeHistory(readHistory(from, NOW))
            .filter((s) => summaryMatches(s, filter))
            .slice(0, 20).length
        }`
      : `${filteredDeliveries(from, 20, filter, NOW).length}`;
  }
  switch (which) {
    case "before-list":
      return `${summarizeHistory(readHistory(from, NOW)).slice(0, 3).length}`;
    case "after-list":
      return `${recentDeliveries(from, 3, undefined, NOW).shown.length}`;
    case "before-route":
      return `${
        summarizeHistory(readHistory(from, NOW))
          .filter((s) => s.route === "alerts")
          .slice(0, 20).length
      }`;
    case "after-route":
      return `${recentDeliveries(from, 20, "alerts", NOW).shown.length}`;
    case "before-redeliver":
      return `${readHistory(from, NOW).filter((r) => r.id === id).length}`;
    case "after-redeliver":
      return `${historyOfIds(from, (each) => each === id, NOW).length}`;
    default:
      throw new Error(`unknown mode ${which}`);
  }
}

if (mode !== undefined && dir !== undefined) {
  const started = process.hrtime.bigint();
  const result = run(mode, dir, process.argv[4] ?? "");
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  process.stdout.write(
    `${JSON.stringify({ mode, result, ms: Math.round(ms), maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`,
  );
} else {
  const home = mkdtempSync(join(tmpdir(), "svc-bench-history-"));
  try {
    const history = join(home, "deliveries");
    mkdirSync(history);
    const id = generate(history);
    // Peak RSS of a process that reads nothing, for comparison.
    process.stdout.write(
      `baseline maxRSS of node --import tsx: ${execFileSync(process.execPath, ["--import", "tsx", "-e", "process.stdout.write(String(Math.round(process.resourceUsage().maxRSS/1024)))"]).toString()} MB\n`,
    );
    for (const which of [
      "list",
      "route",
      "redeliver",
      "filter-status",
      "filter-id",
      "filter-none",
      "filter-until",
    ])
      for (const side of ["before", "after"])
        for (let round = 0; round < 3; round++)
          process.stdout.write(
            execFileSync(process.execPath, [
              "--import",
              "tsx",
              "bench/historyRead.ts",
              `${side}-${which}`,
              history,
              id,
            ]).toString(),
          );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
