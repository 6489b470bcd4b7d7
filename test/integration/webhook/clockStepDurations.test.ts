import { connect } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { startTestGateway, webhookConfig } from "../../helpers/gateway.js";

const OPEN = "INSECURE_NO_AUTH";

/**
 * Request durations (`svc_webhook_request_seconds_total`, the access log) are measured on a clock that is
 * never set: the system clock stepped (NTP, a VM resumed) while a request is in flight neither makes its
 * time negative — which a counter cannot take: /metrics failed until as many request-seconds had passed —
 * nor an hour long.
 */
describe("request durations across a step of the system clock", { timeout: 30_000 }, () => {
  for (const step of [-3_600_000, 3_600_000]) {
    it(`a step of ${step / 1000} s while a request's body comes in is not counted in its time`, async () => {
      const gw = await startTestGateway({
        http: "node",
        config: webhookConfig({ open: { secret: OPEN } }, { access_log: true }),
      });
      try {
        const socket = connect(gw.gateway.port, "127.0.0.1");
        let received = "";
        socket.on("data", (d) => (received += d));
        const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
        socket.on("error", () => {});
        await new Promise((resolve) =>
          socket.write(
            "POST /webhooks/open HTTP/1.1\r\nHost: x\r\nX-Request-ID: stepped\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{",
            resolve,
          ),
        );
        // The head is read and handed over (an answer on another connection came after it).
        expect((await fetch(gw.url("/health"))).status).toBe(200);
        gw.clock.step(step);
        gw.clock.advance(1500);
        socket.write("}");
        await closed;
        expect(received).toMatch(/^HTTP\/1\.1 202 /);
        await vi.waitFor(
          () => expect(gw.logs().map((l) => l.msg)).toContain("[access] POST open 202 stepped 1500ms"),
          { timeout: 10_000 },
        );
        const metrics = await fetch(gw.url("/metrics"));
        expect(metrics.status).toBe(200);
        expect(await metrics.text()).toMatch(/^svc_webhook_request_seconds_total 1\.5\d*$/m);
      } finally {
        await gw.stop();
      }
    });
  }
});
