import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { RUN_NOT_ENDED_NOTE } from "../../../src/cli/webhook/deliveries.js";
import { GATED_AGENT, gatewayPerTest, inHome, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

/**
 * A `202 accepted` event whose run has not ended (queued or running) showed `-` for its run with no NOTE,
 * and `"run": null` in `--json`, as a run lost would: the NOTE and `run_ended: false` now say it goes on.
 */

const gateways = gatewayPerTest();

interface JsonRow {
  readonly id: string;
  readonly run: { outcome: string } | null;
  readonly run_ended?: boolean;
}

describe("svc webhook deliveries of events whose run has not ended", { timeout: 90_000 }, () => {
  it("says so in NOTE and --json while one runs and one waits in the queue; nothing once they ended", async () => {
    const gw = await gateways.start({
      files: { "agent/gated.sh": GATED_AGENT },
      config: webhookConfig(
        { slow: { secret: "INSECURE_NO_AUTH" } },
        {},
        {
          agent: {
            provider: "command",
            command: ["bash", inHome("agent/gated.sh")],
            max_concurrent_runs: 1,
          },
        },
      ),
    });
    const { home } = gw;
    const history = join(home.dir, "deliveries", "history.jsonl");
    for (const id of ["slow-1", "slow-2"])
      expect((await postJson(gw.url("/webhooks/slow"), { n: 1 }, { "x-request-id": id })).status).toBe(202);
    await vi.waitFor(() => expect(readFileSync(history, "utf8")).toContain('"slow-2"'), {
      timeout: 10_000,
      interval: 50,
    });

    // slow-1 runs (held by its agent), slow-2 waits for the one run slot.
    const table = await svc(home, ["webhook", "deliveries"]);
    expect(table.code).toBe(0);
    const rows = table.stdout.split("\n").filter((line) => line.includes("slow-"));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatch(/202 accepted\s+-\s+-\s+run not ended yet \(/);
    for (const row of rows) expect(row.endsWith(RUN_NOT_ENDED_NOTE)).toBe(true);
    const json = await svc(home, ["webhook", "deliveries", "--json"]);
    expect(
      (JSON.parse(json.stdout) as JsonRow[]).map(({ id, run, run_ended }) => ({ id, run, run_ended })),
    ).toEqual([
      { id: "slow-2", run: null, run_ended: false },
      { id: "slow-1", run: null, run_ended: false },
    ]);

    home.write("release", "");
    await vi.waitFor(
      () =>
        expect(
          readFileSync(history, "utf8")
            .split("\n")
            .filter((line) => line.includes('"kind":"run"')),
        ).toHaveLength(2),
      { timeout: 10_000, interval: 50 },
    );
    const ended = await svc(home, ["webhook", "deliveries"]);
    expect(ended.stdout).not.toContain("run not ended");
    expect(ended.stdout).toMatch(/slow-1\s+slow\s+\S+\s+202 accepted\s+ok\s+log ok\s*$/m);
    const endedJson = JSON.parse((await svc(home, ["webhook", "deliveries", "--json"])).stdout) as JsonRow[];
    expect(endedJson.map(({ run, run_ended }) => [run?.outcome, run_ended])).toEqual([
      ["ok", undefined],
      ["ok", undefined],
    ]);
  });
});
