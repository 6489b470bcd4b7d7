import { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import type { ServerHandle } from "../../../src/io/http/listen.js";
import { listenNode } from "../../../src/io/http/node.js";
import { listenUws, loadUws } from "../../../src/io/http/uws.js";
import { listenUwsThreads } from "../../../src/io/http/uwsThreads.js";

/** Reads each body and answers it (as the gateway answers 503 once it stops); `taken` resolves at each head. */
function bodyReader(): { handler: RequestHandler; taken: Promise<void> } {
  let taken: () => void = () => {};
  const promise = new Promise<void>((resolve) => {
    taken = resolve;
  });
  const handler: RequestHandler = (_head, body, reply) => {
    taken();
    body.read(1000, () => reply({ status: 503, body: { error: "Shutting down" } }));
  };
  return { handler, taken: promise };
}

/** A raw connection that keeps what it read and says when the server closed it. */
function connect(port: number): Promise<{ socket: Socket; read: () => string; closed: Promise<void> }> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString();
    });
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    socket.connect(port, "127.0.0.1", () => resolve({ socket, read: () => text, closed }));
  });
}

describe("uWS server stop", () => {
  it("ended() answers a request whose body is still arriving before it closes the connections (it was reset unanswered)", {
    timeout: 3000,
  }, async () => {
    const loaded = await loadUws();
    if (!("uws" in loaded)) throw new Error(loaded.error);
    const { handler, taken } = bodyReader();
    const server = await listenUws(loaded.uws, handler, { host: "127.0.0.1", port: 0 });
    const client = await connect(server.port);
    client.socket.write('POST /webhooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n{"x":');
    await taken;
    server.close();
    let ended = false;
    const ending = (server.ended?.() ?? Promise.resolve()).then(() => {
      ended = true;
    });
    // A few turns: the stop's end must still be waiting for the body.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(ended).toBe(false);
    client.socket.write("12}");
    await ending;
    await client.closed;
    expect(client.read()).toMatch(/^HTTP\/1\.1 503 [^\r]*\r\n[\s\S]*\r\n\r\n\{"error":"Shutting down"\}$/);
  });

  it("ended() closes an idle kept-alive connection at once", { timeout: 3000 }, async () => {
    const loaded = await loadUws();
    if (!("uws" in loaded)) throw new Error(loaded.error);
    const server = await listenUws(loaded.uws, bodyReader().handler, { host: "127.0.0.1", port: 0 });
    const client = await connect(server.port);
    await server.ended?.();
    await client.closed;
    expect(client.read()).toBe("");
  });
});

describe.each(["uws", "uws-threads", "node"] as const)("the stop's end on the %s server", (http) => {
  const listen = async (handler: RequestHandler): Promise<ServerHandle> => {
    const options = { host: "127.0.0.1", port: 0 };
    if (http === "node") return listenNode(handler, options);
    if (http === "uws-threads") return listenUwsThreads(handler, { ...options, threads: 1, bodyLimit: 1000 });
    const loaded = await loadUws();
    if (!("uws" in loaded)) throw new Error(loaded.error);
    return listenUws(loaded.uws, handler, options);
  };

  it("an answer given once it began (a body that was still arriving) says Connection: close, as its connection closes after it", {
    timeout: 5000,
  }, async () => {
    const { handler, taken } = bodyReader();
    const server = await listen(handler);
    const client = await connect(server.port);
    client.socket.write('POST /webhooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n{"x":');
    await taken;
    server.close();
    const ending = server.ended?.() ?? Promise.resolve();
    client.socket.write("12}");
    await ending;
    await client.closed;
    expect(client.read()).toMatch(/^HTTP\/1\.1 503 [^\r]*\r\n(?:[^\r]+\r\n)*Connection: close\r\n/);
  });

  it("requests already on kept-alive connections when it began, not yet read (the stop's steps gave the event loop no turn), are answered before the connections close (they were reset; on node:http the first answer closed the others)", {
    timeout: 5000,
  }, async () => {
    const server = await listen(bodyReader().handler);
    const clients = await Promise.all([1, 2, 3, 4].map(() => connect(server.port)));
    const errors: string[] = [];
    for (const client of clients)
      client.socket.on("error", (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
    const request = 'POST /webhooks/a HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n{"x":12}';
    const answers = () => clients.map((client) => client.read().split("Shutting down").length - 1);
    for (const client of clients) client.socket.write(request);
    for (let i = 0; i < 200 && answers().includes(0); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(answers()).toEqual([1, 1, 1, 1]);
    // Written in the same turn as the stop's end begins: on loopback they are in the server's sockets at once.
    for (const client of clients) client.socket.write(request);
    server.close();
    await server.ended?.();
    await Promise.all(clients.map((client) => client.closed));
    expect(errors).toEqual([]);
    expect(answers()).toEqual([2, 2, 2, 2]);
  });
});
