import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { describe, expect, it, vi } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { readExposition, sample } from "../../helpers/metrics.js";

const SECRET = "exposition-secret";
const gw = gatewayPerTest();
const FIXTURE = await bundledFixture(
  new URL("../../fixtures/mcp/stdio-server.mjs", import.meta.url).pathname,
);
/** A server name written by hand in config.yaml with each character a label value must escape. */
const SERVER = 'we"ird\\x\ny';

/** A command agent calling the server's `add` (ok) and `fail` (an isError result) at its SVC_MCP_URL. */
const sdk = (path: string) =>
  pathToFileURL(join(process.cwd(), "node_modules/@modelcontextprotocol/sdk/dist/esm", path)).href;
const CALLER = `
import { Client } from ${JSON.stringify(sdk("client/index.js"))};
import { StreamableHTTPClientTransport } from ${JSON.stringify(sdk("client/streamableHttp.js"))};
for await (const _ of process.stdin);
const transport = new StreamableHTTPClientTransport(new URL(process.env.SVC_MCP_URL), {
  requestInit: { headers: { Authorization: "Bearer " + process.env.SVC_MCP_TOKEN } },
});
const client = new Client({ name: "caller", version: "1.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
for (const suffix of ["__add", "__fail"]) {
  const tool = tools.find((t) => t.name.endsWith(suffix));
  await client.callTool({ name: tool.name, arguments: suffix === "__add" ? { a: 1, b: 2 } : {} });
}
await client.close();
process.stdout.write("called");
`;

/** What Prometheus (2.x and 3.x) sends with each scrape. */
const PROMETHEUS_HEADERS = {
  Accept:
    "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
  "Accept-Encoding": "gzip",
  "X-Prometheus-Scrape-Timeout-Seconds": "10",
};

describe("the /metrics exposition as a scraper reads it", { timeout: 60_000 }, () => {
  for (const http of ["uws", "node"] as const) {
    it(`${http}: strictly valid text format 0.0.4, label values escaped, also to Prometheus' Accept and Accept-Encoding`, async () => {
      const live = await gw.start({
        http,
        config: webhookConfig(
          { pr: { secret: SECRET } },
          {},
          {
            agent: { provider: "command", command: [process.execPath, "${SVC_HOME}/agent/caller.mjs"] },
            mcp_servers: { [SERVER]: { command: process.execPath, args: [FIXTURE], trust: "full" } },
          },
        ),
        files: { "agent/caller.mjs": CALLER },
      });
      const body = '{"number":1}';
      const accepted = await postJson(live.url("/webhooks/pr"), body, {
        "X-GitHub-Event": "pull_request",
        "X-GitHub-Delivery": "x-1",
        "X-Hub-Signature-256": await signGithub(SECRET, body),
      });
      expect(accepted.status).toBe(202);
      await postJson(live.url("/webhooks/pr"), "{}");
      await vi.waitFor(
        async () => {
          const text = await (await fetch(live.url("/metrics"))).text();
          expect(sample(text, 'svc_run_duration_seconds_count{outcome="ok"}')).toBe(1);
        },
        { timeout: 20_000, interval: 100 },
      );
      for (const headers of [{}, PROMETHEUS_HEADERS]) {
        const res = await fetch(live.url("/metrics"), { headers });
        expect(res.status).toBe(200);
        // Never OpenMetrics (no `# EOF`, no `_created`), never compressed: the 0.0.4 text, as its type says.
        expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
        expect(res.headers.get("content-encoding")).toBeNull();
        const text = await res.text();
        expect(text).not.toContain("# EOF");
        const { problems, samples } = readExposition(text);
        expect(problems).toEqual([]);
        const calls = samples.filter((s) => s.name === "svc_mcp_tool_call_duration_seconds_count");
        expect(calls.map((s) => [s.labels.server, s.labels.outcome, s.value])).toEqual([
          [SERVER, "ok", 1],
          [SERVER, "error", 1],
        ]);
        const requests = samples.filter((s) => s.name === "svc_webhook_requests_total");
        expect(requests).toContainEqual({
          name: "svc_webhook_requests_total",
          labels: { route: "pr", status: "401" },
          value: 1,
        });
      }
    });
  }
});
