import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readHistory } from "../../../src/io/stores/deliveryHistory.js";
import { HTTP_SERVERS, startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

/**
 * A client that half-closes after its request (FIN, as `nc -N`, socat or `shutdown(SHUT_WR)` do).
 * docs/webhook.md: uWS drops an answer that comes after the client's FIN; an answer the head alone decides
 * is written at once, on one thread and on ingress threads alike.
 */

const OPEN = "INSECURE_NO_AUTH";
const statusOf = (received: string) => Number(received.split(" ")[1]);

/** Writes `bytes`, half-closes, and collects what the server writes until it closes the connection. */
function sendAndHalfClose(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true }, () => {
      socket.write(bytes);
      socket.end();
    });
    let received = "";
    socket.on("data", (data) => {
      received += data.toString("latin1");
    });
    socket.on("error", () => {});
    socket.on("close", () => resolve(received));
  });
}

describe.each(HTTP_SERVERS)("a client that half-closes after its request, on the %s server", (http) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      http,
      config: webhookConfig({ open: { secret: OPEN }, signed: { secret: "half-close-secret" } }),
    });
  });
  afterAll(() => gw.stop());

  it("gets the answers the head alone decides: health, 404, 405", async () => {
    const shapes: [string, number][] = [
      ["GET /health HTTP/1.1\r\nHost: x\r\n\r\n", 200],
      ["HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n", 200],
      ["POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405],
      ["POST /elsewhere HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 404],
      ["POST /webhooks/a/b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", 404],
    ];
    for (const [bytes, status] of shapes) {
      for (let i = 0; i < 5; i++) {
        expect(statusOf(await sendAndHalfClose(gw.gateway.port, bytes)), bytes).toBe(status);
      }
    }
  });

  it.skipIf(http === "uws-threads")(
    "on one thread, also an answer the route lookup or the pipeline decides while the request is read (405, 401)",
    async () => {
      // Another method than POST is 405 on a route, 404 on a name that is no route: the route table
      // decides, which lives on the main thread only.
      const wrongMethod = "GET /webhooks/open HTTP/1.1\r\nHost: x\r\n\r\n";
      expect(statusOf(await sendAndHalfClose(gw.gateway.port, wrongMethod))).toBe(405);
      const bytes = "POST /webhooks/signed HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";
      expect(statusOf(await sendAndHalfClose(gw.gateway.port, bytes))).toBe(401);
    },
  );
});

describe.each(HTTP_SERVERS)("a client that goes away mid-request, on the %s server", (http) => {
  it("is owed nothing: no answer counted, logged or kept in the history, and its retry is processed", async () => {
    const gw = await startTestGateway({
      http,
      config: webhookConfig({ open: { secret: OPEN } }, { access_log: true }),
    });
    try {
      const cut = [
        // Mid-body, with a Content-Length and chunked; and mid-head.
        'POST /webhooks/open HTTP/1.1\r\nHost: x\r\nX-Request-ID: cut-1\r\nContent-Length: 100\r\n\r\n{"a":',
        'POST /webhooks/open HTTP/1.1\r\nHost: x\r\nX-Request-ID: cut-2\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n',
        "POST /webhooks/open HTTP/1.1\r\nHost: x\r\nX-Request-ID: cut-3\r\n",
      ];
      for (const bytes of cut) {
        await new Promise<void>((resolve) => {
          const socket = connect({ port: gw.gateway.port, host: "127.0.0.1" }, () => {
            socket.write(bytes, () => socket.end());
          });
          socket.on("error", () => {});
          socket.on("close", () => resolve());
        });
      }
      const retry = await fetch(gw.url("/webhooks/open"), {
        method: "POST",
        body: "{}",
        headers: { "X-Request-ID": "cut-1" },
      });
      expect(await retry.json()).toMatchObject({ status: "accepted", delivery_id: "cut-1" });
      const access = gw
        .logs()
        .filter((l) => l.msg.startsWith("[access]"))
        .map((l) => l.msg.replace(/ \d+ms$/, ""));
      expect(access).toEqual(["[access] POST open 202 cut-1"]);
      const metrics = await (await fetch(gw.url("/metrics"))).text();
      expect(metrics).not.toMatch(/^svc_webhook_requests_total\{route="[^"]*",status="400"\} [1-9]/m);
      expect(
        readHistory(join(gw.home.dir, "deliveries")).filter((r) => r.kind === "request" && r.status !== 202),
      ).toEqual([]);
    } finally {
      await gw.stop();
    }
  });
});
