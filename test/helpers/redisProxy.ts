import { connect, createServer, type Socket } from "node:net";

/**
 * A loopback server in front of a test Redis: each client connection gets its own connection to the real
 * server, and the pair is handed to `serve`. The two end together (either one closed or failed closes
 * both); `close()` ends them all.
 */
export interface RedisProxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startRedisProxy(
  redisPort: number,
  serve: (client: Socket, upstream: Socket) => void,
): Promise<RedisProxy> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(redisPort, "127.0.0.1");
    sockets.add(client);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    serve(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}/0`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
