import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startGatewayProcess } from "../../helpers/gatewayProcess.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalGroup } from "../../helpers/process.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import { clusterConfig } from "../../helpers/redisCluster.js";

/**
 * A SIGKILLed instance's runs are not lost: BullMQ's stall detection hands them to the instances still
 * up once their lock expires (shortened here to 5 s).
 */

const SECRET = "kill-secret";
// Not shorter: an instance still up renews its runs' locks every half of it, and one of them starved of the
// CPU for that long on a loaded machine (1.5 s locks: 0.75 s) would lose a run it is running to another
// instance, which runs it a second time.
const STALL = { lockDurationMs: 5000, stalledIntervalMs: 1000 };

interface Instance {
  readonly name: string;
  readonly child: ChildProcess;
  readonly port: number;
}

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

/** Starts an instance in its own process group, so the test can SIGKILL it and nothing else. */
function startInstance(name: string, config: Record<string, unknown>): Promise<Instance> {
  const dir = join(home.dir, name);
  home.write(`${name}/config.yaml`, stringify(config));
  return startGatewayProcess({ dir, stall: STALL, children, env: { INSTANCE: name } }).then(
    ({ child, port }) => ({ name, child, port }),
  );
}

/** `<id> <event> <instance>` lines: `start` before the agent waits for the go file, `done` after it. */
function lines(file: string): Array<{ id: string; what: string; instance: string }> {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [id, what, instance] = line.split(" ") as [string, string, string];
      return { id, what, instance };
    });
}

describe("an instance SIGKILLed mid-run", { timeout: 120_000 }, () => {
  it("its runs finish on the instances still up, and every accepted id finishes", async () => {
    const log = join(home.dir, "runs.log");
    // Every run waits for this file, so the instance is certainly killed mid-run, whatever the machine's pace.
    const go = join(home.dir, "go");
    const agent = {
      provider: "command",
      command: [
        "sh",
        "-c",
        // The agent runs in a process group of its own, so it outlives its killed gateway like a process
        // on another host would not: it writes `done` only while that gateway ($INSTANCE_PID) is alive.
        `p=$INSTANCE_PID; printf "%s start %s\\n" "$SVC_DELIVERY_ID" "$INSTANCE" >> "$0"; ` +
          `while [ ! -e "$1" ]; do sleep 0.05; done; ` +
          `if [ -e /proc/$p ] && ! grep -q "^State:[[:space:]]*Z" /proc/$p/status; then ` +
          `printf "%s done %s\\n" "$SVC_DELIVERY_ID" "$INSTANCE" >> "$0"; fi`,
        log,
        go,
      ],
      max_concurrent_runs: 2,
    };
    const config = clusterConfig(redis.url, `k${randomUUID()}`, { hook: { secret: SECRET } }, agent);
    const [a] = await Promise.all(["a", "b", "c"].map((name) => startInstance(name, config)));
    const ids = Array.from({ length: 6 }, (_, i) => `kill-${i}`);
    for (const id of ids) {
      const body = JSON.stringify({ id });
      const answer = await postJson(`http://127.0.0.1:${(a as Instance).port}/webhooks/hook`, body, {
        "X-GitHub-Event": "push",
        "X-GitHub-Delivery": id,
        "X-Hub-Signature-256": await sign(SECRET, body),
      });
      expect(answer.status).toBe(202);
    }
    // Killed as soon as it runs something (its agent waits for the go file, so mid-run).
    await vi.waitFor(() => expect(lines(log).filter((l) => l.instance === "a")).not.toEqual([]), {
      timeout: 20_000,
      interval: 20,
    });
    const gone = new Promise((resolve) => (a as Instance).child.once("exit", resolve));
    signalGroup((a as Instance).child.pid as number, "SIGKILL");
    // Its agents must find it dead when they are let go: the kill is queued, the exit comes later.
    await gone;
    const killed = lines(log)
      .filter((l) => l.instance === "a")
      .map((l) => l.id);
    writeFileSync(go, "");
    await vi.waitFor(
      () => {
        const done = new Set(
          lines(log)
            .filter((l) => l.what === "done")
            .map((l) => l.id),
        );
        expect(ids.filter((id) => !done.has(id))).toEqual([]);
      },
      { timeout: 60_000, interval: 100 },
    );
    const done = lines(log).filter((l) => l.what === "done");
    // a never finished anything (killed while its runs waited); its runs finished on b or c, once each.
    expect(done.filter((l) => l.instance === "a")).toEqual([]);
    for (const id of killed)
      expect(done.filter((l) => l.id === id).map((l) => l.instance)).toSatisfy(
        (by: string[]) => by.length === 1 && (by[0] === "b" || by[0] === "c"),
      );
    expect(done).toHaveLength(ids.length);
  });
});
