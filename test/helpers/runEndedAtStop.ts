import { expect } from "vitest";
import { historyDir, readHistory, summarizeHistory } from "../../src/io/stores/deliveryHistory.js";
import { startGatewayInHome, type TestGateway } from "./gateway.js";
import { sample } from "./metrics.js";

/**
 * A run a stop ended as its e-mail went out, read after that stop: counted once with `outcome` (none with the
 * other), listed once with its delivery `ok`, and the next start, two hours on (its delivery id forgotten),
 * finds it finished in the journal and none saved: nothing is queued again.
 */
export async function expectMailedRunEnded(
  gw: TestGateway,
  id: string,
  outcome: "ok" | "failed",
): Promise<void> {
  const exposition = (await gw.gateway.metrics?.registry.metrics()) ?? "";
  const other = outcome === "ok" ? "failed" : "ok";
  expect(sample(exposition, `svc_run_duration_seconds_count{outcome="${outcome}"}`)).toBe(1);
  expect(sample(exposition, `svc_run_duration_seconds_count{outcome="${other}"}`) ?? 0).toBe(0);
  expect(summarizeHistory(readHistory(historyDir(gw.home.dir)))).toEqual([
    expect.objectContaining({
      request: expect.objectContaining({ id, route: "ci", outcome: "accepted" }),
      run: expect.objectContaining({ outcome }),
      delivery: expect.objectContaining({ platform: "email", outcome: "ok" }),
    }),
  ]);
  const again = await startGatewayInHome(gw.home, 300, () => Date.now() + 2 * 3600_000);
  await again.stop();
  expect(
    gw
      .logs()
      .map((l) => l.msg)
      .filter((m) => m.includes("queued again")),
  ).toEqual([]);
}
