import { readdirSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SHARED_NO_REQUEST_NOTE, SHARED_ROTATED_NOTE } from "../../../src/cli/webhook/deliveries.js";
import { historyHooks } from "../../../src/gateway/deliveryHistoryHooks.js";
import {
  createHistoryWriter,
  type HistoryRecord,
  historyDir,
} from "../../../src/io/stores/deliveryHistory.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * docs/cli.md (runs without their request), with `state.backend: redis`: the history of a gateway (the only
 * one) killed after Redis stored a run and before its history recorded the request holds the run alone.
 * `svc webhook deliveries` said "request answered by another instance" of it, where there was none.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const MINUTE = 60_000;

/** A home of `backend` (Redis at a port nobody answers: neither command reaches it here). */
function homeOn(backend: "redis" | "local"): TempHome {
  const made = tempHome();
  made.write(
    "config.yaml",
    stringify(
      cliConfig(
        { hook: { secret: "run-alone-secret-5521" } },
        {
          state:
            backend === "redis"
              ? { backend: "redis", redis_url: "redis://127.0.0.1:9/0" }
              : { backend: "local" },
        },
      ),
    ),
    0o600,
  );
  return made;
}

/** A home on Redis whose history holds the run of `id`, recorded as the gateway records a run's end, and no request. */
function runAloneHome(id: string): TempHome {
  const made = homeOn("redis");
  const writer = createHistoryWriter(historyDir(made.dir), (err) => {
    throw err;
  });
  const now = Date.now();
  historyHooks(writer, () => now).run(
    { deliveryId: id, routeName: "hook", event: "push", receivedAt: now - 1000 },
    undefined,
  );
  writer.close();
  return made;
}

/**
 * A home of `backend` whose history was rotated: `history.1.jsonl` begins with a request answered 5 minutes
 * ago, and `history.jsonl` holds only the run of `id`, of a request received `receivedMinutesAgo`, recorded
 * as the gateway records a run's end (the writer rotates after each batch: a file of 1 byte at most).
 */
function rotatedRunHome(backend: "redis" | "local", id: string, receivedMinutesAgo: number): TempHome {
  const made = homeOn(backend);
  const dir = historyDir(made.dir);
  const now = Date.now();
  const writer = createHistoryWriter(
    dir,
    (err) => {
      throw err;
    },
    () => now,
    1,
  );
  const first: HistoryRecord = {
    kind: "request",
    id: "first-kept",
    at: new Date(now - 5 * MINUTE).toISOString(),
    route: "hook",
    status: 202,
    outcome: "accepted",
    event: "push",
    content_type: "application/json",
    payload_encoding: "utf8",
    payload: '{"id":"first-kept"}',
  };
  writer.record(first);
  writer.flush();
  historyHooks(writer, () => now - 1000).run(
    { deliveryId: id, routeName: "hook", event: "push", receivedAt: now - receivedMinutesAgo * MINUTE },
    undefined,
  );
  writer.flush();
  writer.close();
  expect(readdirSync(dir).filter((name) => name.endsWith(".jsonl") && !name.startsWith("."))).toEqual([
    "history.1.jsonl",
    "history.jsonl",
  ]);
  return made;
}

describe("svc webhook deliveries of a run without its request, with state.backend: redis", () => {
  it("says the request is not in this history, received by another instance or by one killed before it recorded it, not that another instance answered it", async () => {
    home = runAloneHome("R-plain-107");
    const res = await svc(home, ["webhook", "deliveries", "--id", "R-plain-107"]);
    expect(res.code).toBe(0);
    const row = res.stdout.split("\n").find((line) => line.includes("R-plain-107")) ?? "";
    expect(row).toMatch(/R-plain-107\s+hook\s+push\s+-\s+ok\s+-\s+request not in this history \(/);
    expect(row.endsWith(SHARED_NO_REQUEST_NOTE)).toBe(true);
    expect(res.stdout).not.toContain("answered by another instance");
  });

  it("svc webhook redeliver of it says the same: another instance may keep its payload, or none does", async () => {
    home = runAloneHome("R-plain-107");
    const res = await svc(home, ["webhook", "redeliver", "R-plain-107", "--port", "9"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `delivery "R-plain-107" ran here (route hook), but its request is not in this history: another gateway instance received it (run svc webhook redeliver there, with that instance's SVC_HOME: it keeps the payload), or the instance that received it was killed before it recorded the request (its payload was never kept, so it cannot be redelivered)`,
    );
    expect(res.stderr).not.toContain("answered by another gateway instance");
  });
});

describe("a run whose request was rotated out of the history, with state.backend: redis", () => {
  it("svc webhook deliveries says its request may have been rotated out, not that an instance was killed before recording it", async () => {
    home = rotatedRunHome("redis", "R-rot-1", 10);
    const res = await svc(home, ["webhook", "deliveries", "--id", "R-rot-1"]);
    expect(res.code).toBe(0);
    const row = res.stdout.split("\n").find((line) => line.includes("R-rot-1")) ?? "";
    expect(row).toMatch(/R-rot-1\s+hook\s+push\s+-\s+ok\s+-\s+request not in this history \(/);
    expect(row.endsWith(SHARED_ROTATED_NOTE)).toBe(true);
    expect(SHARED_ROTATED_NOTE).toBe(
      "request not in this history (rotated out of it since, or received by another instance)",
    );
    expect(res.stdout).not.toContain("killed");
  });

  it("svc webhook deliveries keeps the redis wording for a request received after the first record kept", async () => {
    home = rotatedRunHome("redis", "R-late-2", 2);
    const res = await svc(home, ["webhook", "deliveries", "--id", "R-late-2"]);
    expect(res.code).toBe(0);
    const row = res.stdout.split("\n").find((line) => line.includes("R-late-2")) ?? "";
    expect(row.endsWith(SHARED_NO_REQUEST_NOTE)).toBe(true);
    expect(res.stdout).not.toContain("rotated out");
  });

  const ROTATED = `delivery "R-rot-1" ran here (route hook: svc webhook deliveries --id R-rot-1 shows its run), but its request has been rotated out of the history since (records are kept 7 days, and no more than the last ~32 MiB of them), with its payload — it cannot be redelivered`;

  it("svc webhook redeliver says its request was rotated out, as with the local backend, and that another instance may have received it", async () => {
    home = rotatedRunHome("local", "R-rot-1", 10);
    const local = await svc(home, ["webhook", "redeliver", "R-rot-1", "--port", "9"]);
    expect(local.code).toBe(2);
    expect(local.stderr).toContain(ROTATED);
    home.cleanup();
    home = rotatedRunHome("redis", "R-rot-1", 10);
    const res = await svc(home, ["webhook", "redeliver", "R-rot-1", "--port", "9"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `${ROTATED} — if another gateway instance received it, run svc webhook redeliver there (with that instance's SVC_HOME: it keeps the payload)`,
    );
    expect(res.stderr).not.toContain("killed");
  });

  it("svc webhook redeliver keeps the redis wording for a request received after the first record kept", async () => {
    home = rotatedRunHome("redis", "R-late-2", 2);
    const res = await svc(home, ["webhook", "redeliver", "R-late-2", "--port", "9"]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(
      `delivery "R-late-2" ran here (route hook), but its request is not in this history: another gateway instance received it (run svc webhook redeliver there, with that instance's SVC_HOME: it keeps the payload), or the instance that received it was killed before it recorded the request`,
    );
    expect(res.stderr).not.toContain("rotated out");
  });
});
