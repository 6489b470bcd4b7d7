import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { postSignedIssue } from "../../helpers/http.js";
import { scrapedSample } from "../../helpers/metrics.js";
import { journaledRun } from "../../helpers/runJournal.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";

/**
 * A run that waits for a server's first connect, when a reload changes the server's entry meanwhile
 * (docs/agent.md, Tools in a run): it went on at once without its tools ("Model tried to call unavailable
 * tool"), with no WARN and no mcpUnavailable. It waits for the new connect and calls the tool. Real sockets
 * on 127.0.0.1: the fake model, a real gateway from config.yaml and a real SDK stdio server that starts once
 * the test makes its gate file.
 */

const SECRET = "hook-secret-reload-first-connect";

/** The fixture stdio server, started once `gate` exists (made by the test). */
const gated = (gate: string) => ({
  command: "sh",
  args: [
    "-c",
    `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" "$2" legacy`,
    gate,
    process.execPath,
    STDIO_FIXTURE,
  ],
  trust: "full",
});

let model: FakeModel | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  await model?.close();
});

describe("a reload that changes a server's entry while runs wait for its first connect", () => {
  it("the run waits for the new connect and calls its tool", { timeout: 60_000 }, async ({
    onTestFinished,
  }) => {
    model = await startFakeOpenAI();
    const gateFile = (dir: string) => join(dir, "gate");
    const z3 = (dir: string, extra: Record<string, unknown> = {}) => ({
      command: "sh",
      args: [
        "-c",
        `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" "$2" legacy`,
        gateFile(dir),
        process.execPath,
        STDIO_FIXTURE,
      ],
      trust: "full",
      ...extra,
    });
    const config = (dir: string, extra: Record<string, unknown> = {}) =>
      webhookConfig(
        {
          r: { prompt: "Issue: {issue.title}", deliver: "log", toolsets: ["z3"] },
          warm: { prompt: "Issue: {issue.title}", deliver: "log", toolsets: ["no_mcp"] },
        },
        { secret: SECRET, rate_limit: 1000 },
        {
          agent: { provider: "openai", model: "m", base_url: model?.baseUrl, retries: 0 },
          mcp_servers: { z3: z3(dir, extra) },
        },
      );
    const gates = tempHome();
    onTestFinished(() => gates.cleanup());
    gw = await startTestGateway({ config: config(gates.dir) });
    const live = gw;
    // A first run loads the model runner, so the next one comes to its MCP tools as soon as it is active.
    model.script({ text: "warm" });
    const warm = await postSignedIssue(live.url("/webhooks/warm"), SECRET, { issue: { title: "t" } }, "w-1");
    expect(warm.status).toBe(202);
    await journaledRun(live.home.dir, "w-1");
    const asked = model.requests.length;
    model.script(
      { toolCalls: [{ name: "mcp__z3__echo", args: { text: "through the reload" } }] },
      { text: "done" },
    );
    const res = await postSignedIssue(live.url("/webhooks/r"), SECRET, { issue: { title: "t" } }, "z-1");
    expect(res.status).toBe(202);
    // The run has begun, and waits for z3's first connect (the model is asked nothing before it has its tools).
    await vi.waitFor(async () => expect(await scrapedSample(live.base, "svc_runs_active")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    writeFileSync(join(live.home.dir, "config.yaml"), stringify(config(gates.dir, { timeout: 44 })));
    live.gateway.reload();
    await vi.waitFor(
      () => expect(live.logs().filter((l) => l.msg === "[mcp] configuration reloaded")).toHaveLength(1),
      { timeout: 10_000, interval: 20 },
    );
    expect(model.requests).toHaveLength(asked);
    writeFileSync(gateFile(gates.dir), "");
    const record = await journaledRun(live.home.dir, "z-1");
    expect(record.toolCalls).toEqual([expect.objectContaining({ name: "mcp__z3__echo", ok: true })]);
    expect(record.mcpUnavailable).toBeUndefined();
    expect(JSON.stringify(model.requests.at(-1)?.json.messages)).toContain("through the reload");
    expect(live.logs().filter((l) => l.level === 40 && l.msg.startsWith("[agent]"))).toEqual([]);
  });

  it("a server connected when the run began, whose entry the same reload changes, is waited for too, and its tool called", {
    timeout: 60_000,
  }, async ({ onTestFinished }) => {
    model = await startFakeOpenAI();
    const gates = tempHome();
    onTestFinished(() => gates.cleanup());
    // y connects at once at the start; its changed entry waits for its own gate.
    const config = (changed: boolean) =>
      webhookConfig(
        {
          r: { prompt: "Issue: {issue.title}", deliver: "log", toolsets: ["z3", "y"] },
          warm: { prompt: "Issue: {issue.title}", deliver: "log", toolsets: ["no_mcp"] },
        },
        { secret: SECRET, rate_limit: 1000 },
        {
          agent: { provider: "openai", model: "m", base_url: model?.baseUrl, retries: 0 },
          mcp_servers: {
            z3: { ...gated(join(gates.dir, "z3")), ...(changed ? { timeout: 44 } : {}) },
            y: changed
              ? { ...gated(join(gates.dir, "y")), timeout: 45 }
              : { command: process.execPath, args: [STDIO_FIXTURE, "legacy"], trust: "full" },
          },
        },
      );
    gw = await startTestGateway({ config: config(false) });
    const live = gw;
    const stateOf = (server: string) =>
      readStatusFile(join(live.home.dir, "mcp-cache"))?.servers.find((s) => s.name === server)?.state;
    model.script({ text: "warm" });
    const warm = await postSignedIssue(live.url("/webhooks/warm"), SECRET, { issue: { title: "t" } }, "w-1");
    expect(warm.status).toBe(202);
    await journaledRun(live.home.dir, "w-1");
    await vi.waitFor(() => expect(stateOf("y")).toBe("connected"), { timeout: 10_000, interval: 20 });
    const asked = model.requests.length;
    model.script(
      { toolCalls: [{ name: "mcp__y__echo", args: { text: "y through the reload" } }] },
      { text: "done" },
    );
    const res = await postSignedIssue(live.url("/webhooks/r"), SECRET, { issue: { title: "t" } }, "z-1");
    expect(res.status).toBe(202);
    // The run waits for z3's first connect; y is connected.
    await vi.waitFor(async () => expect(await scrapedSample(live.base, "svc_runs_active")).toBe(1), {
      timeout: 10_000,
      interval: 20,
    });
    writeFileSync(join(live.home.dir, "config.yaml"), stringify(config(true)));
    live.gateway.reload();
    await vi.waitFor(
      () => expect(live.logs().filter((l) => l.msg === "[mcp] configuration reloaded")).toHaveLength(1),
      { timeout: 10_000, interval: 20 },
    );
    // z3's new connect ends; y's new one has not: the run still waits, and has asked the model nothing.
    writeFileSync(join(gates.dir, "z3"), "");
    await vi.waitFor(() => expect(stateOf("z3")).toBe("connected"), { timeout: 10_000, interval: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(model.requests).toHaveLength(asked);
    expect(stateOf("y")).toBe("connecting");
    writeFileSync(join(gates.dir, "y"), "");
    const record = await journaledRun(live.home.dir, "z-1");
    expect(record.toolCalls).toEqual([expect.objectContaining({ name: "mcp__y__echo", ok: true })]);
    expect(record.mcpUnavailable).toBeUndefined();
    const tools = (model.requests.at(-2)?.json.tools ?? []) as Array<{ function: { name: string } }>;
    expect(tools.map((t) => t.function.name)).toEqual(
      expect.arrayContaining(["mcp__z3__echo", "mcp__y__echo"]),
    );
    expect(JSON.stringify(model.requests.at(-1)?.json.messages)).toContain("y through the reload");
    expect(live.logs().filter((l) => l.level === 40 && l.msg.startsWith("[agent]"))).toEqual([]);
  });
});
