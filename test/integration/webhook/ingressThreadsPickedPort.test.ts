import { Server } from "node:net";
import { describe, expect, it, vi } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenUwsThreads } from "../../../src/io/http/uwsThreads.js";
import { outcome } from "../../../src/streams/types.js";
import { portTakers, takenPort, takeReleasedPorts } from "../../helpers/takenPorts.js";

/**
 * With `platforms.webhook.port: 0` and ingress threads, the port is picked by a bind that is let go before
 * the first thread binds it. Another socket may take it in between; the start then picks another port
 * rather than failing. Here the other socket is a listener bound on the port the moment the pick lets it go.
 */

const handler: RequestHandler = (_head, body, reply) => {
  body.read(1024, () => reply(outcome(202, { status: "accepted" })));
};

describe("ingress threads on port 0", () => {
  const takers = portTakers();

  it("a picked port another socket took before the first thread bound it is given up for another, on which the threads serve", async () => {
    takeReleasedPorts(takers, 1);
    const server = await listenUwsThreads(handler, {
      host: "127.0.0.1",
      port: 0,
      threads: 2,
      bodyLimit: 1024,
    });
    vi.restoreAllMocks();
    try {
      expect(takers).toHaveLength(1);
      expect(server.port).not.toBe(takenPort(takers[0] as Server));
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          fetch(`http://127.0.0.1:${server.port}/webhooks/x`, { method: "POST", body: "{}" }),
        ),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(202));
    } finally {
      server.close();
      await server.ended?.();
    }
  });

  it("gives up after five picked ports were taken, saying it could not listen", async () => {
    takeReleasedPorts(takers, 5);
    await expect(
      listenUwsThreads(handler, { host: "127.0.0.1", port: 0, threads: 2, bodyLimit: 1024 }),
    ).rejects.toThrow(/cannot listen on 127\.0\.0\.1:\d+/);
    expect(takers).toHaveLength(5);
  });

  it("a given port another socket holds fails at once: no other port is tried", async () => {
    const holder = new Server();
    takers.push(holder);
    await new Promise<void>((resolve) =>
      holder.listen({ host: "127.0.0.1", port: 0, exclusive: true }, resolve),
    );
    const port = takenPort(holder);
    await expect(
      listenUwsThreads(handler, { host: "127.0.0.1", port, threads: 2, bodyLimit: 1024 }),
    ).rejects.toThrow(`cannot listen on 127.0.0.1:${port}`);
  });
});
