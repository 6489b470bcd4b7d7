import { resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { entry, useHubs } from "./harness.js";

const UNLISTED = resolve(import.meta.dirname, "../../fixtures/mcp/unlisted-tools-server.mjs");
const hubs = useHubs();

describe("a connect that times out after the handshake, while the tools are listed", () => {
  it("says the server answered the handshake but not tools/list, before what it wrote on stderr", async () => {
    const clock = new SimulatedClock();
    const hub = hubs.hub(
      hubs.home,
      { u: entry({ command: process.execPath, args: [UNLISTED], connect_timeout: 60 }) },
      { clock },
    );
    // The server got tools/list (and says so on stderr): the handshake is done.
    await vi.waitFor(() => expect(hub.stderrSoFar("u")).toEqual(["listing"]), {
      timeout: 10_000,
      interval: 20,
    });
    clock.increment(60_000);
    expect(hub.status()[0]).toMatchObject({
      state: "failed",
      lastError:
        "connect timed out after 60 s (connect_timeout) — the server answered the handshake but not tools/list, the listing of its tools (a fault of the server, or a list slow to build: raise connect_timeout) — its stderr so far: listing",
    });
  });
});
