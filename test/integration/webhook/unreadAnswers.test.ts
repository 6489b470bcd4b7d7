import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import type { ServerHandle } from "../../../src/io/http/listen.js";
import { listenUws, loadUws } from "../../../src/io/http/uws.js";
import { listenUwsThreads } from "../../../src/io/http/uwsThreads.js";

/** Far more requests than the kernel's buffers hold answers for: ~900,000 pipelined `GET`s. */
const MAX_WRITTEN = 32 * 2 ** 20;
const REQUESTS = Buffer.from("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".repeat(500));

const answerAll: RequestHandler = (_head, _body, reply) => reply({ status: 200, body: { status: "ok" } });

/**
 * Pipelines requests on one connection and never reads an answer, until the server closes it or
 * MAX_WRITTEN bytes went out; how many did.
 */
function pipelineWithoutReading(port: number): Promise<{ written: number; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let written = 0;
    let closed = false;
    const pump = () => {
      while (!closed && written < MAX_WRITTEN) {
        written += REQUESTS.length;
        if (!socket.write(REQUESTS)) return;
      }
      if (!closed) {
        socket.destroy();
        resolve({ written, closed: false });
      }
    };
    socket.on("drain", pump);
    socket.on("error", () => {});
    socket.once("close", () => {
      if (closed) return;
      closed = true;
      resolve({ written, closed: true });
    });
    socket.connect(port, "127.0.0.1", () => {
      socket.pause();
      pump();
    });
  });
}

describe("a client that pipelines requests and never reads the answers", () => {
  it.each(["uws", "uws-threads"] as const)(
    "is closed once the socket takes no more answers (%s): the answers owed were kept without bound",
    {
      timeout: 20_000,
    },
    async (http) => {
      let server: ServerHandle;
      if (http === "uws-threads") {
        server = await listenUwsThreads(answerAll, {
          host: "127.0.0.1",
          port: 0,
          threads: 1,
          bodyLimit: 1000,
        });
      } else {
        const loaded = await loadUws();
        if (!("uws" in loaded)) throw new Error(loaded.error);
        server = await listenUws(loaded.uws, answerAll, { host: "127.0.0.1", port: 0 });
      }
      try {
        const { written, closed } = await pipelineWithoutReading(server.port);
        expect({ closed, withinBound: written < MAX_WRITTEN }).toEqual({ closed: true, withinBound: true });
      } finally {
        server.close();
        await server.ended?.();
      }
    },
  );
});
