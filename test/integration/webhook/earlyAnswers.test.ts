import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { rawUntilClose } from "../../helpers/http.js";

/**
 * docs/webhook.md: an early answer (404 unknown route, 413 from Content-Length) carries
 * `Connection: close`; docs/operations.md: with `workers: N` every early answer and close behaves as with
 * `workers: 0`. Sent as exact bytes, and the connection watched after the answer.
 */

const OPEN = "INSECURE_NO_AUTH";
const statusOf = (received: string) => Number(received.split(" ")[1]);

/**
 * Sends each request on one connection only once the previous answer is complete (no pipelining);
 * resolves with the answers' heads once all are in, or once the server closes the connection.
 */
function inTurn(port: number, requests: readonly string[]): Promise<{ heads: string[]; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const heads: string[] = [];
    let buffered = "";
    const done = (closed: boolean) => {
      socket.destroy();
      resolve({ heads, closed });
    };
    socket.on("data", (data) => {
      buffered += data.toString("latin1");
      for (;;) {
        const split = buffered.indexOf("\r\n\r\n");
        if (split === -1) return;
        const head = buffered.slice(0, split);
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < split + 4 + length) return;
        heads.push(head);
        buffered = buffered.slice(split + 4 + length);
        const next = requests[heads.length];
        if (next === undefined) return done(false);
        socket.write(next);
      }
    });
    socket.on("error", () => {});
    socket.on("close", () => done(true));
    socket.on("connect", () => socket.write(requests[0] as string));
  });
}

/** The head of the first answer (through its blank line), the connection then let go: a HEAD answer has no body. */
function headOnly(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let buffered = "";
    const done = () => {
      socket.destroy();
      resolve(buffered);
    };
    socket.on("data", (data) => {
      buffered += data.toString("latin1");
      if (buffered.includes("\r\n\r\n")) done();
    });
    socket.on("error", () => {});
    socket.on("close", done);
    socket.on("connect", () => socket.write(request));
  });
}

/** A request head per kind of answer (the status it gets), each ending before its blank line. */
const ANSWER_SHAPES = {
  "200": "GET /health HTTP/1.1\r\nHost: x\r\n",
  "202": "POST /webhooks/open HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n",
  "405": "GET /webhooks/open HTTP/1.1\r\nHost: x\r\n",
  "404": "POST /elsewhere HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n",
};

describe.each(HTTP_SERVERS)("early answers and Connection: close on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ open: { secret: OPEN } }, { rate_limit: 1000, max_body_bytes: 64 }),
    });
  });
  afterAll(() => gw.stop());

  it("a 404 Unknown route and a 413 carry Connection: close, also to a request that said Connection: close", async () => {
    const shapes = {
      "404": `POST /webhooks/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`,
      "404, client closes": `POST /webhooks/nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`,
      "413": `POST /webhooks/open HTTP/1.1\r\nHost: x\r\nContent-Length: 65\r\n\r\n${"a".repeat(65)}`,
      "413, client closes": `POST /webhooks/open HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 65\r\n\r\n${"a".repeat(65)}`,
    };
    for (const [name, bytes] of Object.entries(shapes)) {
      const { heads } = await inTurn(gw.gateway.port, [bytes]);
      expect(statusOf(heads[0] ?? ""), name).toBe(Number(name.slice(0, 3)));
      expect(heads[0], name).toMatch(/\r\nConnection: close(\r\n|$)/i);
    }
  });

  it("every answer says how its connection goes on, alike on each server: nothing on a kept HTTP/1.1 connection, Connection: close when the request said close (RFC 9112 §9.6)", async () => {
    for (const [name, head] of Object.entries(ANSWER_SHAPES)) {
      const body = head.includes("Content-Length") ? "{}" : "";
      const kept = (await inTurn(gw.gateway.port, [`${head}\r\n${body}`])).heads[0] ?? "";
      expect(statusOf(kept), name).toBe(Number(name));
      // node:http would add `Connection: keep-alive` and `Keep-Alive: timeout=5`; uWS writes neither.
      expect(kept, name).not.toMatch(/\r\n(Connection|Keep-Alive):/i);
      const closing = await rawUntilClose(gw.gateway.port, `${head}Connection: close\r\n\r\n${body}`);
      expect(statusOf(closing.received), name).toBe(Number(name));
      expect(closing.closed, name).toBe(true);
      // uWS closed such a connection without saying so.
      expect(closing.received.match(/\r\nConnection: close\r\n/gi), name).toHaveLength(1);
      // In the same place on each server: right before Content-Length (node appended it after).
      const names = closing.received
        .slice(0, closing.received.indexOf("\r\n\r\n"))
        .split("\r\n")
        .slice(1)
        .map((line) => line.slice(0, line.indexOf(":")).toLowerCase())
        .filter((header) => header !== "date" && header !== "uwebsockets");
      expect(names.slice(-2), name).toEqual(["connection", "content-length"]);
    }
  });

  it("close among other connection options (Connection: TE, close, as Perl's LWP sends it) closes the connection after the answer, which says so (RFC 9112 §9.6)", async () => {
    for (const [name, head] of Object.entries(ANSWER_SHAPES)) {
      const body = head.includes("Content-Length") ? "{}" : "";
      // uWS acted only on a value of five characters: it kept this connection open and said nothing.
      const closing = await rawUntilClose(
        gw.gateway.port,
        `${head}Connection: TE, close\r\n\r\n${body}`,
        1500,
      );
      expect(statusOf(closing.received), name).toBe(Number(name));
      expect(closing.closed, name).toBe(true);
      expect(closing.received.match(/\r\nConnection: close\r\n/gi), name).toHaveLength(1);
    }
    // A HEAD answer says it too (uWS cannot close after a bodiless answer: the client closes).
    const head = await headOnly(
      gw.gateway.port,
      "HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: TE, close\r\n\r\n",
    );
    expect(statusOf(head)).toBe(200);
    expect(head).toMatch(/\r\nConnection: close\r\n/i);
  });

  it("Connection: close on one line and another option on a second line closes the connection after the answer, which says so", async () => {
    for (const [name, head] of Object.entries(ANSWER_SHAPES)) {
      const body = head.includes("Content-Length") ? "{}" : "";
      for (const lines of ["Connection: close\r\nConnection: TE", "Connection: TE\r\nConnection: close"]) {
        // uWS closes on its first Connection line alone; the joined value (`close, TE`) hid that, and the
        // answer closed without saying so.
        const closing = await rawUntilClose(gw.gateway.port, `${head}${lines}\r\n\r\n${body}`, 10_000);
        expect(statusOf(closing.received), `${name} ${lines}`).toBe(Number(name));
        expect(closing.closed, `${name} ${lines}`).toBe(true);
        expect(closing.received.match(/\r\nConnection: close\r\n/gi), `${name} ${lines}`).toHaveLength(1);
      }
    }
  });

  it("a declared Content-Length more than 64 MiB away is answered 413 and the connection cut, unread", async () => {
    const answer = await rawUntilClose(
      gw.gateway.port,
      "POST /webhooks/open HTTP/1.1\r\nHost: x\r\nContent-Length: 200000000\r\n\r\n{}",
    );
    expect(statusOf(answer.received)).toBe(413);
    expect(answer.closed).toBe(true);
  });

  it("after a 404 Unknown route whose body was sent, uWS keeps the connection and answers the next request; node:http closes it", async () => {
    const { heads, closed } = await inTurn(gw.gateway.port, [
      `POST /webhooks/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}`,
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
    ]);
    expect(statusOf(heads[0] ?? "")).toBe(404);
    if (http === "node") expect(closed).toBe(true);
    else expect(heads.map(statusOf)).toEqual([404, 200]);
  });

  it("HEAD with Connection: close is answered without a body and the connection closed, as GET is", async () => {
    for (const [path, status] of [
      ["/health", 200],
      ["/webhooks/open", 405],
    ] as const) {
      for (const method of ["HEAD", "GET"]) {
        const answer = await rawUntilClose(
          gw.gateway.port,
          `${method} ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        );
        expect(statusOf(answer.received), `${method} ${path}`).toBe(status);
        expect(answer.closed, `${method} ${path}`).toBe(true);
        if (method === "HEAD") expect(answer.received.endsWith("\r\n\r\n"), path).toBe(true);
      }
    }
  });
});
