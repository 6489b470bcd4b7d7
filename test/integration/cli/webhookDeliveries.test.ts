import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  RECORDER_AGENT,
  readRun,
  recorderAgent,
  startTestGateway,
  type TestGateway,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

const SECRET = "history-secret";
let gw: TestGateway;
afterEach(() => gw.stop());

async function post(id: string, body: string, signed = true) {
  return postJson(gw.url("/webhooks/pr"), body, {
    "X-GitHub-Event": "pull_request",
    "X-GitHub-Delivery": id,
    ...(signed ? { "X-Hub-Signature-256": await signGithub(SECRET, body) } : {}),
  });
}

describe("svc webhook deliveries and redeliver", { timeout: 120_000 }, () => {
  it("lists recent requests with their run and delivery; redeliver runs the original payload again, marked", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        { pr: { secret: SECRET, events: ["pull_request"], prompt: "PR {number}: {pull_request.title}" } },
        {},
        { agent: recorderAgent() },
      ),
      files: { "agent/recorder.sh": RECORDER_AGENT },
    });
    const body = '{"number":7,"pull_request":{"title":"Fix é"}}';
    expect((await post("d-1", body)).status).toBe(202);
    await waitForRun(gw, "d-1");
    expect((await post("d-1", body)).body).toMatchObject({ status: "duplicate" });
    expect((await post("d-2", '{"secret-looking":"x"}', false)).status).toBe(401);
    // The run's and the delivery's records follow the run.
    const port = String(gw.gateway.port);
    const listed = await vi.waitFor(
      async () => {
        const res = await svc(gw.home, ["webhook", "deliveries", "--json"]);
        const rows = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
        expect(rows.find((r) => r.id === "d-1" && r.outcome === "accepted")?.delivery).not.toBeNull();
        return rows;
      },
      { timeout: 20_000, interval: 200 },
    );
    expect(listed.map((r) => [r.id, r.status, r.outcome, r.payload_kept])).toEqual([
      ["d-2", 401, "Invalid signature", false],
      ["d-1", 200, "duplicate", true],
      ["d-1", 202, "accepted", true],
    ]);
    expect(listed[2]).toMatchObject({
      route: "pr",
      event: "pull_request",
      run: { outcome: "ok" },
      delivery: { platform: "log", outcome: "ok" },
    });
    const dir = join(gw.home.dir, "deliveries");
    for (const file of readdirSync(dir)) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    // An unauthenticated sender's body is not kept.
    expect(readFileSync(join(dir, "history.jsonl"), "utf8")).not.toContain("secret-looking");

    const table = await svc(gw.home, ["webhook", "deliveries", "pr", "--limit", "2"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^TIME\s+DELIVERY ID\s+ROUTE\s+EVENT\s+ANSWER\s+RUN\s+DELIVERY\s+NOTE$/m);
    expect(table.stdout).toMatch(/\sd-2\s+pr\s+pull_request\s+401 Invalid signature\s+-\s+-/);
    expect(table.stdout.trim().split("\n")).toHaveLength(3);

    const again = await svc(gw.home, ["webhook", "redeliver", "d-1", "--port", port]);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining("202 Accepted") });
    const newId = /as (redelivery-[0-9a-f]{8}-d-1)\)/.exec(again.stdout)?.[1] as string;
    expect(newId).toBeDefined();
    const run = await waitForRun(gw, newId);
    expect(run).toMatchObject({ prompt: expect.stringContaining("PR 7: Fix é"), event: "pull_request" });
    expect(readRun(gw.home, "d-1")?.prompt).toBe(run.prompt);
    const after = await svc(gw.home, ["webhook", "deliveries", "--limit", "1"]);
    expect(after.stdout).toContain("redelivery of d-1");

    const missing = await svc(gw.home, ["webhook", "redeliver", "nope", "--port", port]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no delivery "nope"');
    const unkept = await svc(gw.home, ["webhook", "redeliver", "d-2", "--port", port]);
    expect(unkept.code).toBe(2);
    expect(unkept.stderr).toContain("the route did not accept the request");
  });
});
