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
});
