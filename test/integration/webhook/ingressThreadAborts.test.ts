import { connect, type Socket } from "node:net";
import { describe, expect, it, vi } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenUwsThreads } from "../../../src/io/http/uwsThreads.js";
import { outcome } from "../../../src/streams/types.js";

/**
 * docs/operations.md, "Ingress threads": a client that goes away mid-body costs nothing afterwards, as
 * with `workers: 0`. The thread keeps each request until the main thread answers it; one whose client is
 * gone must be let go at once, or its partial body stays (a megabyte per aborted upload) and a stop
 * waits its whole grace for answers nobody can receive.
 */

const HOUR = 3_600_000;

function openUpload(port: number, declared: number, sent: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      socket.write(`POST /webhooks/open HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`);
      socket.write(Buffer.alloc(sent, 0x61), () => resolve(socket));
    });
    socket.on("error", () => {});
  });
}

describe("uWS on an ingress thread, clients that disconnect mid-body", () => {
  it("are forgotten: the handler's read is never called and a stop owes them nothing", async () => {
    const heads: string[] = [];
    let bodies = 0;
    const handler: RequestHandler = (head, body, reply) => {
      heads.push(head.path);
      body.read(4_000_000, () => {
        bodies += 1;
        reply(outcome(202, { status: "accepted" }));
      });
    };
    // A grace of an hour: a thread that still counted the aborted requests as owed would not end.
    const server = await listenUwsThreads(handler, {
      host: "127.0.0.1",
      port: 0,
      threads: 1,
      bodyLimit: 4_000_000,
      stopGraceMs: HOUR,
    });
    const uploads = await Promise.all(
      Array.from({ length: 8 }, () => openUpload(server.port, 1_048_576, 200_000)),
    );
    await vi.waitFor(() => expect(heads).toHaveLength(8));
    for (const socket of uploads) socket.destroy();
    server.close();
    await server.ended?.();
    expect(bodies).toBe(0);
  });
});
