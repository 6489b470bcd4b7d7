import { type AddressInfo, connect, createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { commandOptions, connectRedis } from "../../../../src/io/state/redis/connection.js";
import { olderThanNeeded } from "../../../../src/io/state/redis/serverVersion.js";
import { startTestRedis } from "../../../helpers/redis.js";

/**
 * A Redis older than 5.0 (a distribution's old package: Ubuntu 18.04's 4.0.9, CentOS 7's 3.2): BullMQ's
 * connections refuse it, and the gateway used to start, then spin at full CPU answering nothing (not
 * /health, not SIGTERM). Shown here by a real Redis behind a proxy that reports its major version as 4.
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A proxy to `port` whose replies say `redis_version:4…` (the same length: RESP's lengths still hold). */
async function versionFourProxy(port: number): Promise<number> {
  const server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1");
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) =>
      client.write(chunk.toString("latin1").replace(/redis_version:\d/g, "redis_version:4"), "latin1"),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

describe("a Redis older than svc's run queue needs", { timeout: 30_000 }, () => {
  it("refuses the start naming its version and the fix, rather than a gateway that answers nothing", async () => {
    const redis = await startTestRedis();
    try {
      const port = await versionFourProxy(redis.port);
      const refused = connectRedis(
        `redis://127.0.0.1:${port}/0`,
        "/home/x/config.yaml",
        commandOptions(),
        "svc",
      );
      await expect(refused).rejects.toThrow(
        /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 runs Redis 4\.[\d.]+ \(redis_version:4\.[\d.]+\), older than the 5\.0 svc's run queue \(BullMQ\) needs — upgrade it \(Redis 7 is enough\)$/,
      );
    } finally {
      await redis.cleanup();
    }
  });

  it("Redis 5 and later, and servers that report another product's version (Valkey, Dragonfly), pass", () => {
    expect(olderThanNeeded("redis_version:5.0.7\r\n", "L")).toBeUndefined();
    expect(olderThanNeeded("redis_version:7.2.4\r\n", "L")).toBeUndefined();
    expect(olderThanNeeded("redis_version:7.2.4\r\nvalkey_version:8.0.1\r\n", "L")).toBeUndefined();
    expect(olderThanNeeded("redis_version:4.0.0\r\ndragonfly_version:df-v1.2.0\r\n", "L")).toBeUndefined();
    expect(olderThanNeeded("redis_version:3.2.12\r\n", "L")?.problem).toBe(
      "L runs Redis 3.2.12 (redis_version:3.2.12), older than the 5.0 svc's run queue (BullMQ) needs",
    );
  });
});
