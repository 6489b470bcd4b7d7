import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { commandOptions, connectRedis } from "../../../../src/io/state/redis/connection.js";

/**
 * `state.redis_url` naming a port where another service listens (a typo in the port, a service moved): it
 * answers svc's first command with its own protocol, which is no Redis reply. The start names that, not a
 * Redis to start.
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

async function listen(onConnection: (socket: Socket) => void): Promise<string> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `redis://:pw@127.0.0.1:${(server.address() as AddressInfo).port}/0`;
}

const OTHER_SERVICE =
  "another service listens at that address: fix the host and port in state.redis_url (Redis listens on 6379 unless its port setting says otherwise)";

describe("a state.redis_url where another service answers", { timeout: 20_000 }, () => {
  it("an HTTP server (it answers the first command with 400) is named as no Redis, not as one to start", async () => {
    const url = await listen((socket) =>
      socket.once("data", () => socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")),
    );
    const refused = connectRedis(url, "/home/x/config.yaml", commandOptions());
    await expect(refused).rejects.toThrow(
      /^\/home\/x\/config\.yaml: state\.redis_url: redis:\/\/127\.0\.0\.1:\d+\/0 answered with something that is not a Redis reply \(it began "H"\) — /,
    );
    await expect(refused).rejects.toThrow(OTHER_SERVICE);
    await expect(refused).rejects.not.toThrow(/start Redis|Please report this|EPIPE|pw/);
  });

  it("an HTTP server whose answer a reset cut off (svc's client saw only the reset) is named by its answer to a PING", async () => {
    const url = await listen((socket) =>
      socket.once("data", (chunk: Buffer) => {
        if (chunk.toString().startsWith("PING\r\n")) socket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
        // A server that closes with svc's commands unread resets the connection: its answer is lost with it.
        else socket.resetAndDestroy();
      }),
    );
    const refused = connectRedis(url, "/home/x/config.yaml", commandOptions());
    await expect(refused).rejects.toThrow(
      /redis:\/\/127\.0\.0\.1:\d+\/0 answered with something that is not a Redis reply \(it said "HTTP\/1\.1 400 Bad Request"\) — /,
    );
    await expect(refused).rejects.toThrow(OTHER_SERVICE);
  });

  it("a server that speaks first (SSH, SMTP) is quoted by its first line", async () => {
    const url = await listen((socket) => {
      socket.write("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n");
      // OpenSSH closes on svc's first command with its input unread: a reset.
      socket.once("data", () => {
        socket.write("Invalid SSH identification string.\r\n");
        socket.resetAndDestroy();
      });
    });
    const refused = connectRedis(url, "/home/x/config.yaml", commandOptions());
    await expect(refused).rejects.toThrow(
      /redis:\/\/127\.0\.0\.1:\d+\/0 answered with something that is not a Redis reply \(it said "SSH-2\.0-OpenSSH_9\.2p1 Debian-2"\) — /,
    );
    await expect(refused).rejects.toThrow(OTHER_SERVICE);
  });

  it("a TLS server reached with redis:// (it answers plain text with a TLS alert) is told to use rediss://", async () => {
    // A TLS record: alert (21), TLS 1.2, length 2, fatal (2) protocol_version (70).
    const url = await listen((socket) =>
      socket.once("data", () => socket.end(Buffer.from([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x46]))),
    );
    const refused = connectRedis(url, "/home/x/config.yaml", commandOptions());
    await expect(refused).rejects.toThrow(
      /redis:\/\/127\.0\.0\.1:\d+\/0 answered with TLS, not a Redis reply — a server that expects TLS needs rediss:\/\//,
    );
  });
});
