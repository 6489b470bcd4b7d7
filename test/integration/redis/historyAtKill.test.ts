import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { historyDir } from "../../../src/io/stores/deliveryHistory.js";
import { startGatewayProcess } from "../../helpers/gatewayProcess.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { deliverSigned } from "../../helpers/http.js";
import { signalGroup } from "../../helpers/process.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { clusterConfig, sharedAppendAgent } from "../../helpers/redisCluster.js";

/**
 * docs/operations.md (delivery history), with `state.backend: redis`: the request a gateway answered 202 is in
 * its history, also when the gateway is killed right after. The 202 leaves once Redis answers that it stored
 * the run, and the history's line for it was written only at the end of that event-loop turn: a SIGKILL in
 * between left the sender holding a 202 and the history with the run alone, under a note that blamed another
 * instance (on a setup of one), and nothing `svc webhook redeliver` could send.
 */

const SECRET = "redis-history-kill-secret";
/** The gateway dies (SIGKILL) at the end of the turn in which Redis's reply naming a job first arrives. */
const KILL_AT_REPLY = ["--import", join(import.meta.dirname, "../../helpers/killAtRedisReply.mjs")];

let redis: TestRedis;
let home: TempHome;
const children: ChildProcess[] = [];

beforeAll(async () => {
  redis = await startTestRedis();
  home = tempHome();
});
afterAll(async () => {
  for (const child of children) if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
  await redis.cleanup();
  home.cleanup();
});

function requestRows(dir: string): Array<Record<string, unknown>> {
  const file = join(historyDir(dir), "history.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((row) => row.kind === "request");
}

describe("the delivery history of a gateway on Redis killed right after a 202", { timeout: 30_000 }, () => {
  it("the requests answered 202 have their rows, though the gateway died before the end of the turn Redis's reply answered them in", async () => {
    const dir = join(home.dir, "one");
    const config = clusterConfig(
      redis.url,
      "historykill",
      { hook: { secret: SECRET, prompt: "pr {number}" } },
      sharedAppendAgent(join(home.dir, "runs.log")),
    );
    home.write("one/config.yaml", stringify(config));
    const gateway = await startGatewayProcess({
      dir,
      stall: {},
      children,
      nodeArgs: KILL_AT_REPLY,
      env: { SVC_TEST_KILL_AT_REPLY: "j-hook%3Akept-row-" },
    });
    const exited = new Promise((resolve) => gateway.child.once("exit", (_code, signal) => resolve(signal)));
    const ids = Array.from({ length: 8 }, (_, i) => `kept-row-${i}`);
    const answers = await Promise.all(ids.map((id) => deliverSigned(gateway.port, "hook", id, SECRET)));
    expect(await exited).toBe("SIGKILL");
    const accepted = ids.filter((_, i) => (answers[i] as { status?: number }).status === 202);
    // The first run Redis stored was answered before the kill, in the turn its reply came in.
    expect(accepted.length).toBeGreaterThan(0);
    const rows = new Map(requestRows(dir).map((row) => [row.id, `${row.status} ${row.outcome}`]));
    expect(accepted.map((id) => [id, rows.get(id)])).toEqual(accepted.map((id) => [id, "202 accepted"]));
  });
});
