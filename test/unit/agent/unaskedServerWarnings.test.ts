import { describe, expect, it } from "vitest";
import type { AgentRequest } from "../../../src/actors/agent/runner.js";
import type { McpToolSource } from "../../../src/agent/mcpTools.js";
import { runTools } from "../../../src/agent/runTools.js";
import { UnaskedServerWarnings } from "../../../src/agent/unaskedServerWarnings.js";

/**
 * Runs offered every enabled MCP server without naming one warn about a down server once per episode: again
 * when it fails another way, or after a run found it connected; a run that names it warns each time
 * (docs/agent.md, Tools in a run). The hub is a stand-in whose status the test sets between runs.
 */

type Status = { name: string; state: string; lastError?: string };

function standIn(servers: Status[]): McpToolSource & { set(next: Status[]): void } {
  let status = servers;
  return {
    tools: () =>
      status
        .filter((s) => s.state === "connected")
        .map((s) => ({ server: s.name }) as ReturnType<McpToolSource["tools"]>[number]),
    status: () => status,
    settled: async () => undefined,
    callRegistered: () => Promise.reject(new Error("not called")),
    set(next) {
      status = next;
    },
  };
}

const request = (toolsets: string[], profile?: string): AgentRequest => ({
  route: "r",
  event: "issues",
  deliveryId: "d",
  prompt: "p",
  toolsets,
  profile,
});

/** The servers each run's WARN names (none when it logs none), and whether it says later runs go on without them. */
async function warnings(
  hub: McpToolSource,
  unaskedWarnings: UnaskedServerWarnings,
  toolsets: string[],
  profile?: string,
) {
  const said: string[] = [];
  await runTools(
    { mcp: () => hub, unaskedWarnings },
    request(toolsets, profile),
    new AbortController().signal,
    {
      onGaveUp: (_, warning) => {
        if (warning.servers.length > 0)
          said.push(`${warning.servers.join(",")} connecting${warning.unasked ? " (once)" : ""}`);
      },
      onDown: (_, warning) => {
        if (warning.servers.length > 0)
          said.push(`${warning.servers.map((s) => s.server).join(",")}${warning.unasked ? " (once)" : ""}`);
      },
    },
  );
  return said;
}

const failed = (lastError: string): Status => ({ name: "notes", state: "failed", lastError });

describe("the WARN for a down MCP server runs did not name", () => {
  it("is logged once while the server stays down the same way", async () => {
    const hub = standIn([failed("command not found: x")]);
    const once = new UnaskedServerWarnings();
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
    expect(await warnings(hub, once, [])).toEqual([]);
    // Toolsets that name built-in toolsets only name no MCP server either.
    expect(await warnings(hub, once, ["web_extract"])).toEqual([]);
  });

  it("is logged again when the server fails another way", async () => {
    const hub = standIn([failed("command not found: x")]);
    const once = new UnaskedServerWarnings();
    await warnings(hub, once, []);
    hub.set([failed("permission denied: x")]);
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
    hub.set([{ name: "notes", state: "reconnecting", lastError: "permission denied: x" }]);
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
  });

  it("is not logged again when only what the server process wrote differs, as at each background retry", async () => {
    const exited = (pid: number, at: string, nothing = false) =>
      failed(
        `the server process exited (code 1) before the MCP handshake finished — ${
          nothing
            ? "it wrote nothing on stderr; check command and args"
            : `its stderr: ${at} [pid ${pid}] missing NOTES_TOKEN`
        }`,
      );
    const hub = standIn([exited(4101, "2026-12-06T18:00:01Z")]);
    const once = new UnaskedServerWarnings();
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
    hub.set([exited(4187, "2026-12-06T18:00:31Z")]);
    expect(await warnings(hub, once, [])).toEqual([]);
    hub.set([
      failed(`connect timed out after 60 s (connect_timeout) — its stderr so far: [pid 4201] waiting`),
    ]);
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
    hub.set([
      failed(`connect timed out after 60 s (connect_timeout) — its stderr so far: [pid 4262] waiting`),
    ]);
    expect(await warnings(hub, once, [])).toEqual([]);
    // How it failed still counts: exiting again is another way down than the timeout.
    hub.set([exited(4301, "", true)]);
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
  });

  it("is not logged again for a retry still connecting when the run's wait ended", async () => {
    const hub = standIn([{ name: "notes", state: "connecting" }]);
    const once = new UnaskedServerWarnings();
    expect(await warnings(hub, once, [])).toEqual(["notes connecting (once)"]);
    expect(await warnings(hub, once, [])).toEqual([]);
    hub.set([failed("connect timed out after 60 s (connect_timeout)")]);
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
    hub.set([
      { name: "notes", state: "connecting", lastError: "connect timed out after 60 s (connect_timeout)" },
    ]);
    expect(await warnings(hub, once, [])).toEqual([]);
    hub.set([failed("connect timed out after 60 s (connect_timeout)")]);
    expect(await warnings(hub, once, [])).toEqual([]);
  });

  it("is logged again after a run found the server connected", async () => {
    const hub = standIn([failed("command not found: x")]);
    const once = new UnaskedServerWarnings();
    await warnings(hub, once, []);
    hub.set([{ name: "notes", state: "connected" }]);
    expect(await warnings(hub, once, ["no_mcp"])).toEqual([]);
    hub.set([failed("command not found: x")]);
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
  });

  it("is kept per profile", async () => {
    const hub = standIn([failed("command not found: x")]);
    const once = new UnaskedServerWarnings();
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
    expect(await warnings(hub, once, [], "work")).toEqual(["notes (once)"]);
    expect(await warnings(hub, once, [], "work")).toEqual([]);
  });

  it("is logged at every run that names the server, without counting as the unnamed runs' one", async () => {
    const hub = standIn([failed("command not found: x")]);
    const once = new UnaskedServerWarnings();
    expect(await warnings(hub, once, ["notes"])).toEqual(["notes"]);
    expect(await warnings(hub, once, ["notes"])).toEqual(["notes"]);
    expect(await warnings(hub, once, [])).toEqual(["notes (once)"]);
    expect(await warnings(hub, once, ["notes"])).toEqual(["notes"]);
  });
});
