import { EventEmitter } from "node:events";
import type { Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import { createRedisHealth } from "../../../../src/io/state/redis/connection.js";
import { startRedisFix } from "../../../../src/io/state/redis/unreachable.js";
import { captureLogger } from "../../../fakes/logCapture.js";

const LABEL = "rediss://localhost:6380/0";

/** A connection that is reconnecting: each reconnect fails as a server's reset does. */
function reconnecting(): EventEmitter & { status: string } {
  return Object.assign(new EventEmitter(), { status: "reconnecting" });
}

describe("a rediss:// reconnect that fails once a server took it: why is probed once per outage", () => {
  it("an answer that is only 'start Redis' is not probed for again at each reconnect (each probe is one more TLS connect)", async () => {
    const log = captureLogger();
    const probe = vi.fn(async () => ({ problem: `cannot reach ${LABEL}`, fix: startRedisFix(LABEL) }));
    const health = createRedisHealth(LABEL, log.logger, undefined, undefined, undefined, "requests", probe);
    const connection = reconnecting();
    health.watch("commands", connection as unknown as Redis);
    for (let attempt = 0; attempt < 5; attempt += 1) {
      connection.emit("error", new Error("read ECONNRESET"));
      await vi.waitFor(() => expect(probe).toHaveBeenCalled());
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(probe).toHaveBeenCalledTimes(1);
    expect(log.messages().filter((m) => m.includes("cannot be reconnected to"))).toEqual([]);
  });
});
