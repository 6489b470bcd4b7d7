import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { journaledRun } from "../../helpers/runJournal.js";

/**
 * A run whose route names an MCP server whose connect failed (here a command that is not found) goes on
 * without that server's tools, and says so (docs/agent.md, Tools in a run): a WARN naming the server and
 * its error — svc's secrets hidden in it — for a model run and a `command` run alike, and the model run's
 * journal record lists the server under `mcpUnavailable`. A server that is connected is offered as before.
 * Real sockets on 127.0.0.1: the fake model, a real SDK stdio server, and a real gateway from config.yaml.
 */

const SECRET = "hook-secret-failed-server-0123";
// The missing command quotes the webhook secret, so the warning must hide it.
const MISSING = `svc-test-no-such-command-${SECRET}`;
const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

const mcpServers = {
  notes: { command: MISSING },
  good: { command: process.execPath, args: [SERVER] },
};

const routes = {
  only: { prompt: "Issue: {issue.title}", deliver: "log", toolsets: ["notes"] },
  both: { prompt: "Issue: {issue.title}", deliver: "log", toolsets: ["notes", "good"] },
};

const notFound = (gw: TestGateway) =>
  vi.waitFor(
    () => {
      if (!gw.logs().some((l) => l.msg.includes("command not found")))
        throw new Error("notes has not failed yet");
    },
    { timeout: 10_000, interval: 20 },
  );

const warnings = (gw: TestGateway, deliveryId: string) =>
  gw
    .logs()
    .filter((l) => l.delivery_id === deliveryId && l.level === 40 && l.msg.startsWith("[agent]"))
    .map((l) => l.msg);

const WHY = "command not found: svc-test-no-such-command-[redacted] — check command (and PATH)";
const withoutNotes = (route: string) =>
  `[agent] ${route}: mcp_servers.notes is failed (${WHY}) — the run goes on without its tools`;

describe("a model run whose route names an MCP server that failed to connect", () => {
  let model: FakeModel;
  let gw: TestGateway;

  beforeAll(async () => {
    model = await startFakeOpenAI();
    gw = await startTestGateway({
      config: webhookConfig(
        routes,
        { secret: SECRET, rate_limit: 1000 },
        {
          agent: { provider: "openai", model: "m", base_url: model.baseUrl, retries: 0 },
          mcp_servers: mcpServers,
        },
      ),
    });
    await notFound(gw);
  });

  afterAll(async () => {
    await gw?.stop();
    await model?.close();
  });

  async function run(route: string, deliveryId: string) {
    model.script({ text: "done" });
    const res = await postSignedIssue(
      gw.url(`/webhooks/${route}`),
      SECRET,
      { issue: { title: "t" } },
      deliveryId,
    );
    expect(res.status).toBe(202);
    return journaledRun(gw.home.dir, deliveryId);
  }

  const offered = () =>
    ((model.requests.at(-1)?.json.tools ?? []) as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );

  it("warns once, naming the server and its error, and records it with the run", async () => {
    const record = await run("only", "f-1");
    expect(offered()).toEqual([]);
    expect(warnings(gw, "f-1")).toEqual([withoutNotes("only")]);
    expect(record.outcome).toBe("ok");
    expect(record.mcpUnavailable).toEqual([
      {
        server: "notes",
        state: "failed",
        error: WHY,
      },
    ]);
    expect(JSON.stringify(record)).not.toContain(SECRET);
  });

  it("offers the servers that are connected, and names only the failed one", async () => {
    const record = await run("both", "f-2");
    expect(offered().length).toBeGreaterThan(0);
    expect(offered().every((name) => name.startsWith("mcp__good__"))).toBe(true);
    expect(warnings(gw, "f-2")).toEqual([withoutNotes("both")]);
    expect((record.mcpUnavailable as Array<{ server: string }>).map((s) => s.server)).toEqual(["notes"]);
  });
});

describe("a command run whose route names an MCP server that failed to connect", () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        routes,
        { secret: SECRET, rate_limit: 1000 },
        {
          agent: { provider: "command", command: ["sh", "-c", "cat >/dev/null; echo done"] },
          mcp_servers: mcpServers,
        },
      ),
    });
    await notFound(gw);
  });

  afterAll(async () => {
    await gw?.stop();
  });

  it("warns as a model run does", async () => {
    const res = await postSignedIssue(gw.url("/webhooks/only"), SECRET, { issue: { title: "t" } }, "c-1");
    expect(res.status).toBe(202);
    const said = await vi.waitFor(
      () => {
        if (!gw.logs().some((l) => l.delivery_id === "c-1" && l.msg.includes(" reply:")))
          throw new Error("not delivered yet");
        return warnings(gw, "c-1");
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(said).toEqual([withoutNotes("only")]);
  });
});
