import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenNode } from "../../../src/io/http/node.js";

const health: RequestHandler = (_head, _body, reply) => reply({ status: 200, body: { status: "ok" } });

describe("node:http server stop", () => {
  it("ended() resolves when the listener closed with no connection open ('close' came before it was awaited)", {
    timeout: 3000,
  }, async () => {
    const server = await listenNode(health, { host: "127.0.0.1", port: 0 });
    server.close();
    // The gateway answers the requests still in the pipeline and saves its runs in between.
    await new Promise((resolve) => setImmediate(resolve));
    await expect(server.ended?.()).resolves.toBeUndefined();
  });

  it("ended() also closes a listener nobody closed, and waits for an open keep-alive connection to end", {
    timeout: 3000,
  }, async () => {
    const server = await listenNode(health, { host: "127.0.0.1", port: 0 });
    const res = await fetch(`http://127.0.0.1:${server.port}/health`);
    expect(res.status).toBe(200);
    await res.text();
    await expect(server.ended?.()).resolves.toBeUndefined();
  });

  it("ended() keeps a kept-alive connection open while a body is still arriving: a request sent on it is answered, not closed unanswered", {
    timeout: 5000,
  }, async () => {
    let taken: () => void = () => {};
    const slowTaken = new Promise<void>((resolve) => {
      taken = resolve;
    });
    const handler: RequestHandler = (head, body, reply) => {
      if (head.path === "/health") reply({ status: 200, body: { status: "ok" } });
      else {
        taken();
        body.read(1000, () => reply({ status: 503, body: { error: "Shutting down" } }));
      }
    };
    const server = await listenNode(handler, { host: "127.0.0.1", port: 0 });
    const open = () =>
      new Promise<{ socket: Socket; read: () => string; closed: Promise<void> }>((resolve) => {
        const socket = new Socket();
        let text = "";
        socket.on("data", (chunk) => {
          text += chunk.toString();
        });
        const closed = new Promise<void>((done) => socket.once("close", () => done()));
        socket.connect(server.port, "127.0.0.1", () => resolve({ socket, read: () => text, closed }));
      });
    const slow = await open();
    const kept = await open();
    kept.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    while (!kept.read().endsWith("}")) await new Promise((resolve) => setTimeout(resolve, 5));
    slow.socket.write('POST /webhooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n{"x":');
    await slowTaken;
    server.close();
    const ending = server.ended?.() ?? Promise.resolve();
    // The stop's end still waits for the slow body; a request on the idle kept-alive connection meanwhile.
    kept.socket.write("POST /webhooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}");
    await kept.closed;
    expect(kept.read()).toMatch(
      /\r\n\r\n\{"status":"ok"\}HTTP\/1\.1 503 [^\r]*\r\n[\s\S]*\{"error":"Shutting down"\}$/,
    );
    slow.socket.write("12}");
    await ending;
    await slow.closed;
    expect(slow.read()).toMatch(/^HTTP\/1\.1 503 [\s\S]*\{"error":"Shutting down"\}$/);
  });
});
