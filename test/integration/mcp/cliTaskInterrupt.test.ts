import { spawn } from "node:child_process";
import { describe, expect, it, vi } from "vitest";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { useHubs, useLoopbackHttp } from "./harness.js";
import { droppingTaskServer } from "./taskSessions.js";

const hubs = useHubs();
const serve = useLoopbackHttp();

/** A task server whose task runs for a minute, polled every 20 ms, and `svc mcp call t job` started on it. */
async function callingJob() {
  const s = await droppingTaskServer(serve, { pollInterval: 20, doneAfterMs: 60_000 });
  const home = hubs.home;
  home.write("config.yaml", `mcp_servers:\n  t:\n    url: ${s.url}\n`);
  const cli = spawn(process.execPath, [...SVC_ARGV, "mcp", "call", "t", "job"], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  cli.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise((resolve) => cli.once("exit", (code, signal) => resolve(signal ?? code)));
  return { s, cli, exited, stderr: () => stderr };
}

/** The task was cancelled with tasks/cancel before the session ended (DELETE), and never with a notification. */
function cancelledBeforeTheEnd(s: Awaited<ReturnType<typeof callingJob>>["s"]): void {
  expect(s.state.made).toHaveLength(1);
  const cancel = s.received.findIndex((m) => m.method === "tasks/cancel");
  expect(s.received[cancel]?.params?.taskId).toBe(s.state.made[0]);
  const ended = s.received.findIndex((m) => m.delete === true);
  expect(ended).toBeGreaterThan(cancel);
  const call = s.received.find((m) => m.method === "tools/call")?.id;
  expect(
    s.received.filter((m) => m.method === "notifications/cancelled" && m.params?.requestId === call),
  ).toEqual([]);
}

describe("svc mcp call of a tool run as a task, stopped by Ctrl-C", () => {
  it("while the task runs: cancels it (tasks/cancel) before it ends the session, and ends by the signal", async () => {
    const { s, cli, exited } = await callingJob();
    try {
      // Up to 30 s: a CLI process starting on a machine the whole suite keeps busy.
      await vi.waitFor(() => expect(s.state.polls).toBeGreaterThan(0), { timeout: 30_000, interval: 20 });
      cli.kill("SIGINT");
      // Ended as Ctrl-C ends a command (exit status 130 in a shell).
      expect(await exited).toBe("SIGINT");
    } finally {
      cli.kill("SIGKILL");
    }
    cancelledBeforeTheEnd(s);
  }, 60_000);

  it("while its tools/call waits for its answer: the task the answer names is cancelled (tasks/cancel), not the tools/call", async () => {
    const { s, cli, exited, stderr } = await callingJob();
    let release: () => void = () => undefined;
    s.state.holdCreate = () =>
      new Promise<void>((released) => {
        release = released;
      });
    try {
      await vi.waitFor(() => expect(s.state.created).toBe(1), { timeout: 30_000, interval: 20 });
      cli.kill("SIGINT");
      // The command has taken the Ctrl-C (and given the call up) before the server answers with the task.
      await vi.waitFor(() => expect(stderr()).toContain("interrupted (SIGINT)"), {
        timeout: 10_000,
        interval: 10,
      });
      release();
      expect(await exited).toBe("SIGINT");
    } finally {
      release();
      cli.kill("SIGKILL");
    }
    cancelledBeforeTheEnd(s);
  }, 60_000);
});
