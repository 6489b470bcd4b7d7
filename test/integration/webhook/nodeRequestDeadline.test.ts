import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import type { RequestHandler } from "../../../src/io/http/core.js";
import { listenNode } from "../../../src/io/http/node.js";
import { observeRequests } from "../../../src/io/http/observe.js";
import type { Outcome } from "../../../src/streams/types.js";
import { captureLogger } from "../../fakes/logCapture.js";

/**
 * docs/webhook.md: a request not complete within the deadline is answered 408 by the node:http server;
 * a connection opened and left silent holds no request and is closed as uWS closes it: nothing written,
 * nothing counted. The deadline is shortened here (10 s in the gateway), to 1 s, not less: a connection that
 * has sent nothing at the deadline is the silent one, and a test worker stalled past the deadline between
 * the connect and reading the request's first bytes (a loaded machine) would have its stalled request
 * taken for a silent one.
 */

/** Writes `bytes` (if any) on a fresh connection and resolves with what the server wrote once it closes. */
function untilClosed(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => {
      if (bytes !== "") socket.write(bytes);
    });
    let received = "";
    socket.on("data", (d) => (received += d));
    socket.on("error", () => {});
    socket.on("close", () => resolve(received));
  });
}

describe("node:http server request deadline", () => {
  it("a silent connection is closed with no answer and not counted; a stalled request is a counted JSON 408", {
    timeout: 15_000,
  }, async () => {
    const refused: Outcome[] = [];
    const handler: RequestHandler = Object.assign(
      ((_head, _body, reply) => reply({ status: 200, body: {} })) as RequestHandler,
      { refused: (answer: Outcome) => void refused.push(answer) },
    );
    const server = await listenNode(handler, { host: "127.0.0.1", port: 0, requestTimeoutMs: 1000 });
    try {
      const [silent, stalled] = await Promise.all([
        untilClosed(server.port, ""),
        untilClosed(server.port, "POST /webhooks/a HTTP/1.1\r\nHost: x\r\n"),
      ]);
      expect(silent).toBe("");
      expect(stalled).toMatch(/^HTTP\/1\.1 408 /);
      // The Date every other answer carries (RFC 9110 §6.6.1), also on this one written by hand.
      expect(stalled).toMatch(/\r\nDate: [^\r\n]+ GMT\r\n/);
      expect(stalled).toMatch(/\r\n\r\n\{"error":"Request timeout"\}$/);
      expect(refused.map((answer) => answer.status)).toEqual([408]);
    } finally {
      server.close();
      await server.ended?.();
    }
  });

  it("a request whose body stalled is timed from its head in the metrics and the access log, not as 0", {
    timeout: 15_000,
  }, async () => {
    // A fake clock: the head comes at 1000 ms; the pipeline's turn moves it 7 s on before the body stalls.
    let clock = 1000;
    const answered: string[] = [];
    const log = captureLogger();
    const handler = observeRequests(
      (_head, body, reply) => {
        clock += 7000;
        body.read(1024, () => reply({ status: 202, body: { status: "accepted" } }));
      },
      {
        logger: log.logger,
        now: () => clock,
        multiplexProfiles: () => false,
        accessLog: () => true,
        isRoute: (name) => name === "slowsender",
        refusesAfterHead: true,
        metrics: {
          answered: (route, status, _outcome, seconds) => void answered.push(`${route} ${status} ${seconds}`),
          render: async () => ({ contentType: "text/plain", text: "" }),
        },
      },
    );
    const server = await listenNode(handler, { host: "127.0.0.1", port: 0, requestTimeoutMs: 1000 });
    try {
      const stalled = await untilClosed(
        server.port,
        'POST /webhooks/slowsender HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{"a":',
      );
      expect(stalled).toMatch(/^HTTP\/1\.1 408 /);
      expect(answered).toEqual(["slowsender 408 7"]);
      expect(log.messages()).toContain("[access] POST slowsender 408 - 7000ms");
    } finally {
      server.close();
      await server.ended?.();
    }
  });
});
