import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { agentGroupsDir } from "../../../src/state/gatewayState.js";
import { callTool, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { alive, pidInFile, signalGroup } from "../../helpers/process.js";
import { type Foreground, killIfRunning, runForeground } from "../cli/svc.js";
import { deliver, SECRET } from "./killHelpers.js";

/**
 * docs/durability.md, docs/mcp.md: the processes a run's tools started (a stdio MCP server, a `terminal`
 * command) are noted as the agents are, so the start after a SIGKILL stops what the killed gateway left
 * before the run runs again — the tool call in flight never goes on beside its rerun.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("SIGKILL with tool processes running", { timeout: 60_000 }, () => {
  it("the next start stops the killed gateway's stdio MCP server and terminal command before the rerun, saying which they were", async () => {
    const home: TempHome = tempHome();
    cleanups.push(() => home.cleanup());
    const model = await startFakeOpenAI();
    cleanups.push(() => model.close());
    // The server through a wrapper that outlives its stdin (the server exits with the gateway; the shell
    // that leads its group does not), as a wrapper script does.
    const wrapper = `echo $$ > "$0/mcp.pid"; "$1" "$2"; sleep 60`;
    const command = `echo $$ > "${home.dir}/terminal.pid"; sleep 60; echo end >> "${home.dir}/terminal.log"`;
    model.script(callTool("terminal", { command }), { text: "done" });
    home.write(
      "config.yaml",
      stringify({
        agent: { provider: "openai", model: "test-model", base_url: model.baseUrl, max_steps: 3 },
        mcp_servers: {
          fixture: { command: "sh", args: ["-c", wrapper, home.dir, process.execPath, SERVER] },
        },
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            port: 0,
            routes: { pr: { secret: SECRET, prompt: "pr {number}", toolsets: ["terminal", "fixture"] } },
          },
        },
      }),
    );
    const first: Foreground = await runForeground(home);
    cleanups.push(() => killIfRunning(first));
    const server = await pidInFile(join(home.dir, "mcp.pid"));
    cleanups.push(() => {
      if (alive(server)) signalGroup(server, "SIGKILL");
    });
    expect(await deliver(first.port, "pr", "slow")).toMatchObject({ status: 202 });
    const terminal = await pidInFile(join(home.dir, "terminal.pid"));
    cleanups.push(() => {
      if (alive(terminal)) signalGroup(terminal, "SIGKILL");
    });
    // Both groups noted (the terminal command's bash leads its own).
    await vi.waitFor(
      () =>
        expect(readdirSync(agentGroupsDir(home.dir)).sort()).toEqual(
          [String(server), String(terminal)].sort(),
        ),
      { timeout: 10_000, interval: 20 },
    );
    first.child.kill("SIGKILL");
    await first.exited;
    expect(alive(server)).toBe(true);
    expect(alive(terminal)).toBe(true);

    const second = await startGatewayInHome(home);
    cleanups.push(() => second.stop());
    // Stopped by the start itself, before the journal's run runs again.
    await vi.waitFor(() => expect([alive(server), alive(terminal)]).toEqual([false, false]), {
      timeout: 15_000,
      interval: 20,
    });
    const log = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8");
    expect(log).toContain(
      "[mcp] fixture: stopped the server process (SIGKILL to its group) left running by a gateway that was killed",
    );
    expect(log).toContain("[tools] terminal: stopped a command (SIGKILL to its group) left running");
    // Only tools' groups were stopped: no agent process group is counted.
    expect(log).not.toContain("agent process group(s)");
    const stops = log.indexOf("[tools] terminal: stopped");
    const replay = log.search(/replay|run again/i);
    expect(replay === -1 || replay > stops).toBe(true);
    expect(readdirSync(agentGroupsDir(home.dir)).filter((n) => n === String(terminal))).toEqual([]);
  });
});
