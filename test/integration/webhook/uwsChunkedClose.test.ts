import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

/**
 * docs/webhook.md: uWS misreads what follows a chunked body that ends in trailer fields, so a next request on
 * that connection was never answered (the client hung until its own timeout). Every answer to a chunked
 * request on uWS says `Connection: close` and the connection closes after it; node:http reads trailers and
 * keeps the connection.
 */

const OPEN = "INSECURE_NO_AUTH";
const CHUNKED_WITH_TRAILER =
  'POST /webhooks/open HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n0\r\nX-Checksum: 1\r\n\r\n';
const CHUNKED =
  'POST /webhooks/open HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{"a":1}\r\n0\r\n\r\n';
const HEALTH = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

/** The answers read on one connection: `first` is written, then `second` once a whole answer is in. */
function twoRequests(
  port: number,
  first: string,
  second: string,
): Promise<{ received: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    let received = "";
    let sentSecond = false;
    const wholeAnswers = () => {
      let count = 0;
      let at = 0;
      for (;;) {
        const split = received.indexOf("\r\n\r\n", at);
        if (split < 0) return count;
        const length = Number(/content-length: (\d+)/i.exec(received.slice(at, split))?.[1] ?? 0);
        if (received.length < split + 4 + length) return count;
        count += 1;
        at = split + 4 + length;
      }
    };
    const done = (closed: boolean) => {
      socket.destroy();
      resolve({ received, closed });
    };
    socket.on("data", (data) => {
      received += data.toString("latin1");
      if (!sentSecond && wholeAnswers() === 1) {
        sentSecond = true;
        socket.write(second);
      } else if (wholeAnswers() === 2) done(false);
    });
    socket.on("error", () => {});
    socket.on("close", () => done(true));
    socket.on("connect", () => socket.write(first));
  });
}

describe.each(HTTP_SERVERS)("a chunked request on a kept-alive connection (%s server)", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ open: { secret: OPEN } }, { rate_limit: 1000 }),
    });
  });
  afterAll(() => gw.stop());

  it.each([
    ["ending in trailer fields", CHUNKED_WITH_TRAILER],
    ["without trailers", CHUNKED],
  ])(
    "%s: uWS answers it with Connection: close and closes; node:http answers the next request",
    async (_, chunked) => {
      const { received, closed } = await twoRequests(gw.gateway.port, chunked, HEALTH);
      expect(received).toMatch(/^HTTP\/1\.1 202 /);
      if (http === "node") {
        expect(received).toContain('{"status":"ok","platform":"webhook"}');
        expect(received).not.toMatch(/\r\nConnection: close\r\n/i);
      } else {
        expect(received).toMatch(/\r\nConnection: close\r\n/i);
        expect(received.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
        expect(closed).toBe(true);
      }
    },
  );

  it("an early answer to a chunked request (405 to a chunked GET) closes too on uWS, once its body is read", async () => {
    const { received, closed } = await twoRequests(
      gw.gateway.port,
      "GET /webhooks/open HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: 1\r\n\r\n",
      HEALTH,
    );
    expect(received).toMatch(/^HTTP\/1\.1 405 /);
    if (http === "node") expect(received).toContain('{"status":"ok","platform":"webhook"}');
    else {
      expect(received).toMatch(/\r\nConnection: close\r\n/i);
      expect(closed).toBe(true);
    }
  });
});
