import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";

/**
 * A gateway runs for days and is reloaded many times: each reload that changes an MCP server's entry restarts
 * its process, and each changes the routes. What the process holds (its files, its child processes, its
 * signal and exit listeners) comes back to where it was: nothing is added per reload and left behind.
 */
const OPEN = "INSECURE_NO_AUTH";

/** Descriptors other than sockets (the test's own keep-alive connections come and go). */
const files = () =>
  readdirSync("/proc/self/fd")
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return "";
      }
    })
    .filter((target) => target !== "" && !target.startsWith("socket:"))
    .sort();

/** The MCP server's processes among this process's children (vitest has its own). */
const serverPids = () =>
  readdirSync("/proc/self/task")
    .flatMap((task) =>
      readFileSync(`/proc/self/task/${task}/children`, "utf8").trim().split(" ").filter(Boolean),
    )
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(STDIO_FIXTURE);
      } catch {
        return false;
      }
    });
const children = () => serverPids().length;

/** Each process listener, by event and function (not a count: another file's may go meanwhile). */
const listeners = () =>
  process
    .eventNames()
    .flatMap((name) =>
      (process as NodeJS.EventEmitter).listeners(name).map((fn) => ({ name: String(name), fn })),
    );

/**
 * What the process holds now that it did not hold at `before`: files (as a multiset of their targets) and
 * listeners. Only what was added counts: the test files run before this one in the same worker may still
 * let go of theirs meanwhile (pino's exit hook goes when its streams are collected), which is no leak.
 */
function added(before: { files: string[]; listeners: ReturnType<typeof listeners> }) {
  const left = [...before.files];
  const newFiles = files().filter((file) => {
    const at = left.indexOf(file);
    if (at === -1) return true;
    left.splice(at, 1);
    return false;
  });
  const newListeners = listeners()
    .filter(({ name, fn }) => !before.listeners.some((old) => old.name === name && old.fn === fn))
    .map(({ name, fn }) => `${name}: ${fn.name || "(anonymous)"}`);
  return { files: newFiles, children: children(), listeners: newListeners };
}

function config(generation: number) {
  return webhookConfig(
    {
      ci: { secret: OPEN, prompt: `build ${generation} {n}`, deliver: "log" },
      [`r${generation % 3}`]: { secret: OPEN, deliver: "log", coalesce: { key: "{n}", window_seconds: 1 } },
    },
    { rate_limit: 1000 },
    {
      agent: { provider: "echo" },
      mcp_servers: {
        fx: {
          command: process.execPath,
          args: [STDIO_FIXTURE, "legacy"],
          env: { GENERATION: String(generation) },
        },
      },
    },
  );
}

const gw = gatewayPerTest();

describe("a gateway reloaded many times", () => {
  it("holds the same files, child processes and process listeners after 12 reloads that each restart its MCP server", async () => {
    const g = await gw.start({ config: config(0), logLevel: "info" });
    const connects = () => g.logs().filter((l) => l.msg.startsWith("[mcp] fx: connected")).length;
    await vi.waitFor(() => expect(connects()).toBe(1), { timeout: 15_000 });
    expect((await postJson(g.url("/webhooks/ci"), { n: 0 })).status).toBe(202);
    await vi.waitFor(() => expect(children()).toBe(1), { timeout: 10_000 });
    const before = { files: files(), listeners: listeners() };
    const seen = new Set(serverPids());
    for (let generation = 1; generation <= 12; generation++) {
      g.home.write("config.yaml", stringify(config(generation)), 0o600);
      g.gateway.reload();
      // Its entry changed: a new process is started (the earlier one stops).
      await vi.waitFor(() => expect(serverPids().filter((pid) => !seen.has(pid))).toHaveLength(1), {
        timeout: 10_000,
      });
      for (const pid of serverPids()) seen.add(pid);
      expect((await postJson(g.url("/webhooks/ci"), { n: generation })).status).toBe(202);
      expect((await postJson(g.url(`/webhooks/r${generation % 3}`), { n: generation })).status).toBe(202);
    }
    g.home.write("config.yaml", stringify(config(0)), 0o600);
    g.gateway.reload();
    // The last restart's process has connected and every earlier one has exited.
    await vi.waitFor(() => expect(added(before)).toEqual({ files: [], children: 1, listeners: [] }), {
      timeout: 20_000,
      interval: 100,
    });
  }, 60_000);
});
