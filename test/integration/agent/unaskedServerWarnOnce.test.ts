import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postSignedIssue } from "../../helpers/http.js";
import { journaledRun } from "../../helpers/runJournal.js";

/**
 * A route whose toolsets name no MCP server is offered every enabled one, so a failed server it never asked
 * for (here a command that is not found) would have each of its runs log the same WARN (docs/agent.md, Tools
 * in a run): that WARN is logged once while the server stays failed the same way, and says later runs go on
 * without it too, while each run's journal record still names the server (`mcpUnavailable`). A route that
 * names the server warns at each run. A background retry that fails the same way (its stderr naming another
 * process) is no new episode; once a background retry has connected the server and it has failed again, the
 * WARN is logged again. Real sockets on 127.0.0.1: the fake model, a real SDK stdio server, and a real
 * gateway from config.yaml.
 */

const SECRET = "hook-secret-unasked-server-0123";
const MISSING = "svc-test-no-such-command-unasked";
const GATED = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/marker-gated-server.mjs"));

const routes = {
  busy: { prompt: "Issue: {issue.title}", deliver: "log" },
  named: { prompt: "Issue: {issue.title}", deliver: "log", toolsets: ["notes"] },
};

const config = (baseUrl: string, notes: Record<string, unknown>) =>
  webhookConfig(
    routes,
    { secret: SECRET, rate_limit: 1000 },
    {
      agent: { provider: "openai", model: "m", base_url: baseUrl, retries: 0 },
      mcp_servers: { notes },
    },
  );

const WHY = `command not found: ${MISSING} — check command (and PATH)`;
const ONCE =
  `[agent] busy: mcp_servers.notes is failed (${WHY}) — the run goes on without its tools, as later runs ` +
  "will until it connects (not said again while it stays so: the run's toolsets do not name it)";
/** The WARN for the server whose process exits before its handshake; its stderr names its pid. */
const EXITED =
  /^\[agent\] busy: mcp_servers\.notes is failed \(the server process exited \(code 3\) before the MCP handshake finished — its stderr: \[pid \d+\] .+ is missing\) — the run goes on without its tools, as later runs will until it connects/;
const EACH_RUN = `[agent] named: mcp_servers.notes is failed (${WHY}) — the run goes on without its tools`;

describe("a failed MCP server that runs are offered without naming it", () => {
  let model: FakeModel;
  let gw: TestGateway;
  let deliveries = 0;

  const agentWarnings = () =>
    gw
      .logs()
      .filter((l) => l.level === 40 && l.msg.startsWith("[agent]"))
      .map((l) => l.msg);

  /** Waits until the hub has said `text` of notes `count` times (at INFO or WARN: a repeated failure is DEBUG). */
  /** How many times the hub has said `text` of notes (at INFO or WARN: a repeated failure is DEBUG). */
  const timesSaid = (text: string) =>
    gw
      .logs()
      .filter(
        (l) => l.level >= 30 && l.msg.startsWith("[mcp]") && l.msg.includes("notes") && l.msg.includes(text),
      ).length;

  /** Waits until the hub has said `text` of notes `count` times. */
  const hubSaid = (text: string, count: number) =>
    vi.waitFor(
      () => {
        if (timesSaid(text) < count) throw new Error(`notes has not said "${text}" yet`);
      },
      { timeout: 10_000, interval: 20 },
    );

  beforeAll(async () => {
    model = await startFakeOpenAI();
    gw = await startTestGateway({ config: config(model.baseUrl, { command: MISSING }) });
    await hubSaid("command not found", 1);
  });

  afterAll(async () => {
    await gw?.stop();
    await model?.close();
  });

  async function run(route: string) {
    deliveries += 1;
    const deliveryId = `u-${deliveries}`;
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

  const reload = (notes: Record<string, unknown>) => {
    gw.home.write("config.yaml", stringify(config(model.baseUrl, notes)), 0o600);
    gw.gateway.reload();
  };

  it("warns once for the runs of a route without toolsets, and records the server with each run", async () => {
    for (let i = 0; i < 4; i++) {
      const record = await run("busy");
      expect(record.outcome).toBe("ok");
      expect(record.mcpUnavailable).toEqual([{ server: "notes", state: "failed", error: WHY }]);
    }
    expect(agentWarnings()).toEqual([ONCE]);
  });

  it("warns at each run of a route that names the server in toolsets", async () => {
    const before = agentWarnings().length;
    for (let i = 0; i < 3; i++) await run("named");
    await run("busy");
    expect(agentWarnings().slice(before)).toEqual([EACH_RUN, EACH_RUN, EACH_RUN]);
  });

  it("warns again once a background retry has connected the server and it has failed again, with no reload between", async () => {
    // The reload only sets the scene (a fresh runner, which has warned of nothing yet): the server is then
    // broken and mended by a file alone, and the hub's background retries find it so. It lists no tools, so
    // once it has connected a lost connection leaves none registered and runs go on without it again.
    const ready = join(gw.home.dir, "notes-ready");
    const HANDSHAKE = "before the MCP handshake finished";
    reload({ command: process.execPath, args: [GATED, ready] });
    await hubSaid(HANDSHAKE, 1);
    const before = agentWarnings().length;
    await run("busy");
    // A background retry fails the same way, its stderr naming another process: not a new episode.
    await hubSaid(HANDSHAKE, 2);
    await run("busy");
    const episode = agentWarnings().slice(before);
    expect(episode).toHaveLength(1);
    expect(episode[0]).toMatch(EXITED);

    writeFileSync(ready, "");
    await hubSaid("connected again", 1);
    const up = await run("busy");
    expect(up.mcpUnavailable).toBeUndefined();

    const after = agentWarnings().length;
    const failures = timesSaid(HANDSHAKE);
    rmSync(ready);
    await hubSaid(HANDSHAKE, failures + 1);
    for (let i = 0; i < 2; i++) {
      const down = await run("busy");
      expect(down.mcpUnavailable).toEqual([expect.objectContaining({ server: "notes", state: "failed" })]);
    }
    const again = agentWarnings().slice(after);
    expect(again).toHaveLength(1);
    expect(again[0]).toMatch(EXITED);
  });
});
