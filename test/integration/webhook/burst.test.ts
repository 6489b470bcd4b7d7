import { sign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { appendAgent, appendedRuns } from "../../helpers/appendAgent.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { journalRuns } from "../../helpers/runJournal.js";

/**
 * Spec 6 (idempotency) and 4.2 step 9 under load: thousands of signed deliveries sent at once, each on
 * its own connection, must each be answered and run exactly once; repeated ids must run once.
 * Runs are counted in the run journal (the echo agent, no process per run); the queue-cap burst keeps a
 * slow command agent so that runs wait and the queue fills.
 */

const SECRET = "burst-secret";

async function deliver(gw: TestGateway, id: string, n: number) {
  const body = JSON.stringify({ action: "opened", number: n });
  return postJson(gw.url("/webhooks/pr"), body, {
    "X-GitHub-Event": "pull_request",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
}

describe("a burst of signed deliveries sent at once", { timeout: 60_000 }, () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { pr: { secret: SECRET, prompt: "PR {number}" } },
        { rate_limit: 100_000 },
        { agent: { provider: "echo", max_concurrent_runs: 8 } },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("400 unique delivery ids: every request is 202 accepted and every event runs exactly once", async () => {
    const ids = Array.from({ length: 400 }, (_, i) => `u-${i}`);
    const answers = await Promise.all(ids.map((id, i) => deliver(gw, id, i)));
    expect(answers.filter((a) => a.status !== 202)).toEqual([]);
    expect(answers.map((a) => a.body.delivery_id)).toEqual(ids);
    await vi.waitFor(() => expect(journalRuns(gw.home.dir).size).toBeGreaterThanOrEqual(ids.length), {
      timeout: 50_000,
      interval: 100,
    });
    const counts = journalRuns(gw.home.dir);
    expect([...counts.entries()].filter(([id, n]) => n !== 1 || !id.startsWith("u-"))).toEqual([]);
    expect(counts.size).toBe(ids.length);
  });

  it("150 ids each sent 4 times (600 requests), interleaved: one 202 and three 200 duplicate per id, one run per id", async () => {
    const unique = Array.from({ length: 150 }, (_, i) => `d-${i}`);
    const sends = [0, 1, 2, 3].flatMap(() => unique);
    const answers = await Promise.all(sends.map((id, i) => deliver(gw, id, i)));
    const perId = new Map<string, number[]>();
    for (const [i, answer] of answers.entries()) {
      const id = sends[i] as string;
      perId.set(id, [...(perId.get(id) ?? []), answer.status]);
      if (answer.status === 200) expect(answer.body).toEqual({ status: "duplicate" });
    }
    for (const id of unique) expect(perId.get(id)?.sort()).toEqual([200, 200, 200, 202]);
    const done = () => [...journalRuns(gw.home.dir).keys()].filter((id) => id.startsWith("d-"));
    await vi.waitFor(() => expect(done().length).toBeGreaterThanOrEqual(unique.length), {
      timeout: 50_000,
      interval: 100,
    });
    const counts = journalRuns(gw.home.dir);
    expect(unique.filter((id) => counts.get(id) !== 1)).toEqual([]);
    expect(done().length).toBe(unique.length);
  });
});

describe("a burst past the run queue cap", { timeout: 60_000 }, () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      runQueueCap: 20,
      config: webhookConfig(
        { pr: { secret: SECRET, prompt: "PR {number}" } },
        { rate_limit: 100_000 },
        { agent: appendAgent(2) },
      ),
    });
  });
  afterAll(() => gw.stop());

  it("60 at once: the overflow is 503 and never runs; retried later, each event runs exactly once", async () => {
    let pending = Array.from({ length: 60 }, (_, i) => `c-${i}`);
    const refusedOnce = new Set<string>();
    for (let round = 0; pending.length > 0 && round < 40; round++) {
      const answers = await Promise.all(pending.map((id, i) => deliver(gw, id, i)));
      const refused = pending.filter((_, i) => answers[i]?.status === 503);
      for (const [i, answer] of answers.entries()) {
        if (answer.status === 503) {
          expect(answer.body).toEqual({ error: "Agent run queue is full, retry later" });
        } else {
          expect([pending[i], answer.status]).toEqual([pending[i], 202]);
        }
      }
      // A refused event has not run, and is not remembered as a duplicate for its retry.
      const ran = appendedRuns(gw.home.dir);
      expect(refused.filter((id) => ran.has(id))).toEqual([]);
      for (const id of refused) refusedOnce.add(id);
      pending = refused;
      if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(pending).toEqual([]);
    expect(refusedOnce.size).toBeGreaterThan(0);
    await vi.waitFor(
      () => expect([...appendedRuns(gw.home.dir).keys()].filter((id) => id.startsWith("c-")).length).toBe(60),
      { timeout: 50_000, interval: 100 },
    );
    expect([...appendedRuns(gw.home.dir).values()].filter((n) => n !== 1)).toEqual([]);
  });
});
