import { describe, expect, it } from "vitest";
import { SimulatedClock } from "xstate";
import type { TransportFor } from "../../../src/io/mcp/connect.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

/**
 * A burst of calls to a server that is down (a backend gone, a crash it does not come back from): the calls
 * that waited for their turn while a connect ran share its failure, one at a time as all at once, instead
 * of each starting a connect (a process) of its own in turn.
 */

const ctx = useHubs();

/** Connects to a fresh in-memory server while `up`, else fails the connect; counts the connects. */
function flakyServers(): { transportFor: TransportFor; connects(): number; up(value: boolean): void } {
  let up = false;
  let connects = 0;
  const live = inMemoryServers(() => buildServer());
  return {
    transportFor: (name, rendered) => {
      connects += 1;
      if (!up) throw new Error("backend is down");
      return live(name, rendered);
    },
    connects: () => connects,
    up(value) {
      up = value;
    },
  };
}

const outcome = (call: Promise<unknown>) =>
  call.then(
    () => "answered",
    (err: Error) => err.message,
  );

describe.each([false, true])(
  "calls queued while a connect fails (supports_parallel_tool_calls: %s)",
  (parallel) => {
    it("get that connect's error; the next call after it connects again", async () => {
      const servers = flakyServers();
      const h = ctx.hub(
        ctx.home,
        { fx: entry({ ...IN_MEMORY_ENTRY, supports_parallel_tool_calls: parallel }) },
        // The backoff's retries never fire: only calls connect.
        { transportFor: servers.transportFor, clock: new SimulatedClock() },
      );
      expect((await h.settled("fx")).state).toBe("failed");
      expect(servers.connects()).toBe(1);
      const burst = await Promise.all(
        Array.from({ length: 8 }, (_, i) => outcome(h.call("fx", "echo", { text: `call ${i}` }))),
      );
      // Each is told its call was not sent: the connect it waited on failed.
      expect(new Set(burst)).toEqual(new Set(['mcp_servers.fx: backend is down; "echo" was not run']));
      // One connect for the whole burst, as for calls that all wait at once.
      expect(servers.connects()).toBe(2);
      servers.up(true);
      expect(text(await h.call("fx", "echo", { text: "after" }))).toBe("after");
      expect(servers.connects()).toBe(3);
    });
  },
);
