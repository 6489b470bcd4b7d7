import { cpSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Gateway } from "../../../src/gateway/index.js";
import { historyDir, readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { deliverSigned, postJson } from "../../helpers/http.js";
import { liveOnDisk, openGate, ranLines, runCounts, writeConfig } from "./killHelpers.js";

/**
 * An upgrade in place right after a crash: the SVC_HOME an older svc (commit ce8d18f9, see the fixture's
 * README) left when it was killed with runs queued, a coalescing group open, a cron job due and a
 * subscription, started by this version. Everything the older one answered 202 for runs once.
 */
const FIXTURE = join(import.meta.dirname, "../../fixtures/upgrade-ce8d18f9");
const SECRET = "upgrade-secret";
/**
 * When the older gateway was killed. The new one starts five minutes later on its own wall clock, whenever
 * the test runs: its delivery ids are within their hour, its group past its wait, its job due once.
 */
const KILLED_AT = Date.parse("2026-12-01T21:08:29Z");

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

describe("an SVC_HOME an older svc left when it was killed", () => {
  it("runs each run and group it accepted once, keeps its cron job, history and subscription", async () => {
    home = tempHome();
    cpSync(FIXTURE, home.dir, { recursive: true });
    writeConfig(
      home,
      {
        plain: { secret: SECRET, prompt: "plain {n}" },
        grp: {
          secret: SECRET,
          prompt: "grp {n}",
          coalesce: { key: "{repo}", window_seconds: 20, max_wait_seconds: 60 },
        },
      },
      1,
    );
    openGate(home);
    const dir = home.dir;
    const shift = Date.now() - (KILLED_AT + 5 * 60_000);
    const now = () => Date.now() - shift;
    gateway = await startGatewayInHome(home, 300, now);

    // The queued runs, the group (its latest event, with its merged count) and the cron job due meanwhile.
    await vi.waitFor(
      () => {
        expect(ranLines(home as TempHome).length).toBeGreaterThanOrEqual(6);
        expect(liveOnDisk(home as TempHome).runs.size).toBe(0);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(
      ranLines(home)
        .map(([id, prompt]) => `${id.startsWith("cron-") ? "cron" : id} ${prompt}`)
        .sort(),
    ).toEqual([
      "cron nightly report",
      "g3 [Coalesced: this run covers 3 events; 2 earlier events for this key were superseded]",
      "p1 plain 1",
      "p2 plain 2",
      "p3 plain 3",
      "s1 deploy 9",
    ]);
    expect([...runCounts(home).values()].every((count) => count === 1)).toBe(true);

    // The job's next run moved on from its due time; its run is recorded.
    await vi.waitFor(
      () => {
        const job = JSON.parse(readFileSync(join(dir, "cron", "jobs.json"), "utf8")).jobs.e82c115b;
        expect(job).toMatchObject({ name: "nightly", state: "enabled", last_run: { status: "ok" } });
        expect(Date.parse(job.next_run)).toBeGreaterThan(now());
      },
      { timeout: 10_000 },
    );

    // The history the older version wrote reads on, with this version's run outcomes added.
    const history = readHistory(historyDir(dir), now());
    expect(history.filter((r) => r.kind === "request").map((r) => r.id)).toEqual([
      "p1",
      "p2",
      "p3",
      "g1",
      "g2",
      "g3",
      "s1",
    ]);
    await vi.waitFor(
      () =>
        expect(
          readHistory(historyDir(dir), now())
            .flatMap((r) => (r.kind === "run" ? [r.id] : []))
            .sort(),
        ).toEqual(["g3", "p1", "p2", "p3", "s1"]),
      { timeout: 10_000 },
    );

    // A sender's retry of an event the older version accepted is a duplicate; the subscription serves.
    const port = gateway.port as number;
    expect(await deliverSigned(port, "plain", "p1", SECRET, { n: 1 })).toMatchObject({
      status: 200,
      body: { status: "duplicate" },
    });
    const body = JSON.stringify({ n: 10 });
    const pushed = await postJson(`http://127.0.0.1:${port}/webhooks/deploys`, body, {
      "X-GitHub-Event": "push",
      "X-GitHub-Delivery": "s2",
      "X-Hub-Signature-256": await sign(SECRET, body),
    });
    expect(pushed).toMatchObject({ status: 202, body: { status: "accepted" } });
    await vi.waitFor(() => expect(runCounts(home as TempHome).get("s2")).toBe(1), { timeout: 10_000 });
  });
});
