import { readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { describe, expect, it, vi } from "vitest";
import { gatewayPerTest, HTTP_SERVERS, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { sample } from "../../helpers/metrics.js";
import { journalRuns } from "../../helpers/runJournal.js";

/**
 * A load tester's burst over a few kept-alive connections: every id sent three times at once, and more
 * senders that write a whole request and leave without reading the answer. However the answers went, the
 * gateway's own accounts agree: the metrics' accepted events, the delivery history's 202 lines and the runs
 * are the same events, each run exactly once, and every duplicate answered is counted as one.
 */

const SECRET = "ledger-secret";
const perTest = gatewayPerTest();

async function signedRequest(
  id: string,
  n: number,
): Promise<{ headers: Record<string, string>; body: string }> {
  const body = JSON.stringify({ number: n });
  return {
    body,
    headers: {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "x-github-event": "pull_request",
      "x-github-delivery": id,
      "x-hub-signature-256": await sign(SECRET, body),
    },
  };
}

function keptAlivePost(gw: TestGateway, agent: Agent, id: string, n: number): Promise<number> {
  return signedRequest(id, n).then(
    ({ headers, body }) =>
      new Promise((resolve, reject) => {
        const req = request(
          { agent, host: "127.0.0.1", port: gw.gateway.port, method: "POST", path: "/webhooks/pr", headers },
          (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode ?? 0));
          },
        );
        req.on("error", reject);
        req.end(body);
      }),
  );
}

/** Writes the whole request on a connection of its own and closes it at once, never reading the answer. */
async function postAndLeave(gw: TestGateway, id: string, n: number): Promise<void> {
  const { headers, body } = await signedRequest(id, n);
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  await new Promise<void>((resolve) => {
    const socket = connect(gw.gateway.port, "127.0.0.1", () => {
      socket.write(`POST /webhooks/pr HTTP/1.1\r\nHost: 127.0.0.1\r\n${head}\r\n${body}`, () => {
        socket.destroy();
        resolve();
      });
    });
    socket.on("error", () => resolve());
  });
}

/** The ids the delivery history recorded as answered `status`, with how often. */
function historyIds(gw: TestGateway, status: number): Map<string, number> {
  const counts = new Map<string, number>();
  const text = readFileSync(join(gw.home.dir, "deliveries", "history.jsonl"), "utf8");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const record = JSON.parse(line) as { kind: string; id: string; status?: number };
    if (record.kind === "request" && record.status === status)
      counts.set(record.id, (counts.get(record.id) ?? 0) + 1);
  }
  return counts;
}

describe.each(HTTP_SERVERS)("the accounts of a kept-alive burst agree (%s)", (http) => {
  it("accepted events, 202 history lines and runs are the same events, each once; duplicates are counted as answered", {
    timeout: 30_000,
  }, async () => {
    const gw = await perTest.start({
      http,
      config: webhookConfig(
        { pr: { secret: SECRET, prompt: "PR {number}" } },
        { rate_limit: 100_000 },
        { agent: { provider: "echo", max_concurrent_runs: 4 } },
      ),
    });
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const ids = Array.from({ length: 150 }, (_, i) => `k-${i}`);
    const left = Array.from({ length: 60 }, (_, i) => `l-${i}`);
    const [statuses] = await Promise.all([
      Promise.all([0, 1, 2].flatMap(() => ids.map((id, i) => keptAlivePost(gw, agent, id, i)))),
      Promise.all(left.map((id, i) => postAndLeave(gw, id, i))),
    ]);
    agent.destroy();
    expect(statuses.filter((s) => s !== 202 && s !== 200)).toEqual([]);
    expect(statuses.filter((s) => s === 202)).toHaveLength(ids.length);

    const metrics = async () => (await fetch(gw.url("/metrics"))).text();
    // Every accepted event has run (the abandoned senders' events too, when their request was read whole).
    await vi.waitFor(
      async () => {
        const text = await metrics();
        expect(sample(text, 'svc_run_duration_seconds_count{outcome="ok"}')).toBe(
          sample(text, 'svc_webhook_events_total{route="pr",outcome="accepted"}'),
        );
        expect(sample(text, "svc_runs_waiting")).toBe(0);
        expect(sample(text, "svc_runs_active")).toBe(0);
      },
      { timeout: 20_000, interval: 100 },
    );
    const text = await metrics();
    const accepted = sample(text, 'svc_webhook_events_total{route="pr",outcome="accepted"}');
    const runs = journalRuns(gw.home.dir);
    const recorded = historyIds(gw, 202);
    expect([...runs.values()].filter((n) => n !== 1)).toEqual([]);
    expect([...recorded.values()].filter((n) => n !== 1)).toEqual([]);
    expect([...runs.keys()].sort()).toEqual([...recorded.keys()].sort());
    expect(runs.size).toBe(accepted);
    for (const id of ids) expect(runs.get(id)).toBe(1);
    expect([...runs.keys()].filter((id) => !ids.includes(id) && !left.includes(id))).toEqual([]);
    const duplicates = statuses.filter((s) => s === 200).length;
    expect(sample(text, 'svc_webhook_events_total{route="pr",outcome="duplicate"}')).toBe(duplicates);
    expect([...historyIds(gw, 200).values()].reduce((sum, n) => sum + n, 0)).toBe(duplicates);
  });
});
