import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { startInspector } from "../../../src/actors/inspector.js";
import { type Gateway, startGateway } from "../../../src/gateway/index.js";
import { silentLogger } from "../../../src/io/log.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { onPickedPort, postJson } from "../../helpers/http.js";
import { openInspectorClient } from "../../helpers/inspectorClient.js";

/**
 * The run queue as the inspector shows it: the `runs` actor's context holds the queue, and the root's
 * context that actor's input, which each root snapshot (a spawn, such as an MCP server added by a reload)
 * serialized field by field: every waiting run with its prompt, and the runs under way (a Set) as `{}`
 * however many ran. The `runs` actor shows it as its counts; the root, which publishes only when it
 * changes itself (so its counts stayed those of its last snapshot however long ago), points to that actor.
 */
const STDIO_SERVER = await bundledFixture(
  fileURLToPath(new URL("../../fixtures/mcp/stdio-server.mjs", import.meta.url)),
);
const MARKER = "waiting-run-prompt-marker-5d2b";
/** A run's rendered prompt (the route's template, which a reload's route table shows, has `{n}`). */
const RENDERED = new RegExp(`${MARKER} \\d`);

let home: TempHome | undefined;
let gateway: Gateway | undefined;
const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

interface RootSnapshot {
  type: string;
  sessionId: string;
  snapshot: {
    context: { children: Record<string, unknown>; specs: { runs: { input: { queue: unknown } } } };
  };
}

/** A gateway under an inspector client, whose one run slot is held by a run that never ends, three runs queued. */
async function threeRunsOneSlot() {
  const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
  cleanups.push(() => bridge.stop());
  const client = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
  cleanups.push(() => client.socket.terminate());
  home = tempHome();
  const dir = home.dir;
  const stuck = ["bash", "-c", 'touch "$0/started-$$"; exec sleep 30', dir];
  const config = {
    gateway: { drain_timeout_seconds: 0 },
    agent: { provider: "command", command: stuck, max_concurrent_runs: 1 },
    platforms: {
      webhook: {
        enabled: true,
        host: "127.0.0.1",
        routes: { gh: { secret: "INSECURE_NO_AUTH", prompt: `${MARKER} {n}` } },
      },
    },
  };
  home.write("config.yaml", stringify(config));
  const started = await startGateway({
    home: dir,
    env: { SVC_HOME: dir },
    port: 0,
    logger: silentLogger(),
    inspect: bridge.inspect,
  });
  gateway = started;
  for (const n of [1, 2, 3]) {
    const res = await postJson(
      `http://127.0.0.1:${started.port}/webhooks/gh`,
      { n },
      { "x-request-id": `q-${n}` },
    );
    expect(res.status).toBe(202);
  }
  await vi.waitFor(() => expect(readdirSync(dir).some((f) => f.startsWith("started-"))).toBe(true), {
    timeout: 10_000,
    interval: 50,
  });
  return { client, config, home, gateway: started };
}

describe("--inspect: the run queue", () => {
  it("shows in a root snapshot as a pointer to the runs actor, not as each waiting run's prompt nor stale counts", async () => {
    const { client, config, home, gateway } = await threeRunsOneSlot();
    // An MCP server added by a reload is spawned under the root: a root snapshot.
    home.write(
      "config.yaml",
      stringify({ ...config, mcp_servers: { files: { command: process.execPath, args: [STDIO_SERVER] } } }),
    );
    gateway.reload();
    const root = await vi.waitFor(
      () => {
        const found = client.messages
          .map((m) => JSON.parse(m) as RootSnapshot)
          .find(
            (e) =>
              e.type === "@xstate.snapshot" && e.snapshot?.context?.children?.["mcp:files"] !== undefined,
          );
        if (found === undefined) throw new Error("no root snapshot with mcp:files yet");
        return found;
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(root.snapshot.context.specs.runs.input.queue).toBe("see the runs actor");
    expect(client.messages.join("\n")).not.toMatch(RENDERED);
  }, 120_000);
  it("is published as its counts change, with no other actor's change to carry it", async () => {
    const { client } = await threeRunsOneSlot();
    await vi.waitFor(
      () => {
        const counts = client.messages
          .map((m) => JSON.parse(m) as { type: string; snapshot?: { context?: { queue?: unknown } } })
          .filter((e) => e.type === "@xstate.snapshot" && e.snapshot?.context?.queue !== undefined)
          .map((e) => e.snapshot?.context?.queue);
        expect(counts.at(-1)).toEqual({ waiting: 2, active: 1, retrying: 0 });
      },
      { timeout: 20_000, interval: 50 },
    );
    expect(client.messages.join("\n")).not.toMatch(RENDERED);
  }, 120_000);
});
