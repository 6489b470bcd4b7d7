import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, waitFor } from "./svc.js";

/**
 * docs/agent.md, Credentials in a reply: what a server was sent during a run stays hidden in all of that run's
 * output, also once a reload (SIGHUP) during the run reconnected the server with a token rotated in the
 * profile's `.env`: the token the run's tool result showed before the reload, and the one a call after it shows.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
const AGENT = await bundledFixture(join(import.meta.dirname, "../../fixtures/agent/mcpClientAgent.mjs"));
const ROOT = "root-token-value-AAAA1111";
const OLD = "alpha-token-before-BBBB2222";
const NEW = "alpha-token-after-CCCC3333";

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(async () => {
  await model?.close();
});

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  // Stopped as an operator stops it, so its MCP servers are stopped with it; killed if it does not exit.
  if (gateway !== undefined && gateway.child.exitCode === null) {
    signalProcess(gateway.child.pid ?? 0, "SIGTERM");
    await Promise.race([gateway.exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  }
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

/** `s` sends the profile's token; `gate` holds a run's call until a file exists. */
const SERVERS = {
  s: { command: process.execPath, args: [SERVER], env: { API_TOKEN: "${TOK}" } },
  gate: { command: process.execPath, args: [SERVER, "--wait-tool"] },
};

const gatewayLog = () => readFileSync(join(home?.dir ?? "", "logs", "gateway.log"), "utf8");
const connects = () => gatewayLog().split("[mcp] s: connected").length - 1;

/** Starts `svc gateway run` with `agent`, route `ra` of profile alpha, its token OLD in profiles/alpha/.env. */
async function start(agent: Record<string, unknown>): Promise<{ home: TempHome; gateway: Foreground }> {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify(
      cliConfig(
        { ra: { secret: "INSECURE_NO_AUTH", prompt: "{call}", deliver: "log", profile: "alpha" } },
        { gateway: { multiplex_profiles: true }, agent, mcp_servers: SERVERS },
      ),
    ),
    0o600,
  );
  home.write(".env", `TOK=${ROOT}\n`, 0o600);
  home.write("profiles/alpha/.env", `TOK=${OLD}\n`, 0o600);
  gateway = await runForeground(home);
  return { home, gateway };
}

/**
 * Once a run of alpha got its token from `s` and waits on `gate`: the token is rotated, the gateway reloaded
 * (SIGHUP) and alpha's `s` reconnected with the new one; then the run's call ends (the file `go` is written).
 */
async function rotateDuringRun(live: { home: TempHome; gateway: Foreground }, go: string) {
  await waitFor(() => existsSync(`${go}.waiting`), "the run's call of gate");
  expect(connects()).toBe(2);
  live.home.write("profiles/alpha/.env", `TOK=${NEW}\n`, 0o600);
  signalProcess(live.gateway.child.pid ?? 0, "SIGHUP");
  await waitFor(() => connects() === 3, "alpha's reconnect of s with the rotated token");
  live.home.write(go.slice(live.home.dir.length + 1), "");
}

/** The reply the log delivery wrote for `id` (the line after its ` reply:` line, without the line's fields). */
async function loggedReply(id: string): Promise<string> {
  let line: string | undefined;
  await waitFor(() => {
    const lines = gatewayLog().split("\n");
    line = lines.find((l, i) => l.includes(`"delivery_id":"${id}"`) && lines[i - 1]?.endsWith(" reply:"));
    return line !== undefined;
  }, `the reply of ${id}`);
  const text = (line ?? "").trim();
  return text.slice(0, text.lastIndexOf(" {"));
}

describe("a token a reload replaced during a run", { timeout: 90_000 }, () => {
  it("stays hidden in a command run's reply that shows the tool result it got before the reload", async () => {
    const live = await start({ provider: "command", command: [process.execPath, AGENT] });
    const go = join(live.home.dir, "go");
    const call = JSON.stringify({
      call: "mcp__s__env",
      arguments: { name: "API_TOKEN" },
      after: [{ call: "mcp__gate__wait_for", arguments: { path: go } }],
    });
    const url = `http://127.0.0.1:${live.gateway.port}/p/alpha/webhooks/ra`;
    expect((await postJson(url, { call }, { "X-GitHub-Delivery": "c-1" })).status).toBe(202);
    await rotateDuringRun(live, go);

    const reply = JSON.parse(await loggedReply("c-1")) as {
      result: { content: Array<{ text: string }> };
      after: Array<{ content: Array<{ text: string }> }>;
    };
    expect(reply.result.content).toEqual([{ type: "text", text: "[redacted]" }]);
    expect(reply.after[0]?.content).toEqual([{ type: "text", text: "there" }]);
    expect(gatewayLog()).not.toContain(OLD);
  });

  it("stays hidden in a model run's reply, and the new token is hidden in its tool result after the reload", async () => {
    const live = await start({ provider: "openai", model: "m", base_url: model.baseUrl });
    const go = join(live.home.dir, "go");
    const showToken = { toolCalls: [{ name: "mcp__s__env", args: { name: "API_TOKEN" } }] };
    model.requests.length = 0;
    model.script(showToken, { toolCalls: [{ name: "mcp__gate__wait_for", args: { path: go } }] }, showToken, {
      text: `read ${OLD} then ${NEW}`,
    });
    const url = `http://127.0.0.1:${live.gateway.port}/p/alpha/webhooks/ra`;
    expect((await postJson(url, { call: "show" }, { "X-GitHub-Delivery": "m-1" })).status).toBe(202);
    await rotateDuringRun(live, go);

    expect(await loggedReply("m-1")).toBe("read [redacted] then [redacted]");
    const messages = (model.requests[3]?.json.messages ?? []) as Array<{ role: string; content: unknown }>;
    expect(messages.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "[redacted]",
      "there",
      "[redacted]",
    ]);
    const log = gatewayLog();
    expect(log).not.toContain(OLD);
    expect(log).not.toContain(NEW);
  });
});
