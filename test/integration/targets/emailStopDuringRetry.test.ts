import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { emailPlatform, type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import { startTestGateway, stopPastDrain, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { expectMailedRunEnded } from "../../helpers/runEndedAtStop.js";

/**
 * docs/delivery-targets.md (email), with state.backend: local: a stop whose drain ends while a mail waits
 * to retry the recipients the server refused for now ends the delivery there. The others got the mail, so
 * it counts as sent and a warning names who missed it; the run is not kept, so the next start neither runs
 * the agent again nor mails the whole list a second time. The run ended, so it is recorded as any ended run
 * is: its line in the delivery history (svc webhook deliveries) and its count in the run metric.
 */
const OPEN = "INSECURE_NO_AUTH";
const received: string[][] = [];
let server: FakeSmtp;
let port: number;

beforeAll(async () => {
  server = await startFakeSmtp({
    received,
    refuse: (address) => (address === "busy@example.org" ? { code: 452, text: "Mailbox full" } : undefined),
  });
  port = server.port;
});
afterAll(() => server.close());

describe("state.backend: local — a stop while a mail waits to retry the recipients refused for now", () => {
  it("counts the mail sent, names who missed it, records the run ended, and keeps no run to mail the whole list again", async () => {
    const gw = await startTestGateway({
      fakeSleeps: true,
      // Shorter than the retry's wait (1000 ms): the drain ends while the mail waits, before its retry is made.
      drainTimeoutMs: 500,
      config: webhookConfig(
        { ci: { secret: OPEN, prompt: "build {n}", deliver: "email" } },
        { rate_limit: 1000 },
        {
          agent: { provider: "echo" },
          platforms: {
            email: emailPlatform(port, "ops@example.org, busy@example.org"),
          },
        },
      ),
    });
    try {
      const res = await postJson(gw.url("/webhooks/ci"), { n: 7 }, { "X-Request-ID": "mail-stop-1" });
      expect(res.status).toBe(202);
      await vi.waitFor(() => expect(gw.logs().some((l) => l.msg.includes("retry 1/3 in"))).toBe(true), {
        timeout: 10_000,
        interval: 10,
      });
      await stopPastDrain(gw);
      expect(received).toEqual([["ops@example.org"]]);
      const messages = gw.logs().map((l) => l.msg);
      expect(messages).toContain(
        '[delivery] email: route "ci": not delivered to busy@example.org (452 Mailbox full); the other recipients got it',
      );
      // Nor is it saved for the next start as a run the stop cut short.
      expect(messages.filter((m) => m.includes("not finished at shutdown"))).toEqual([]);
      // Ended ok (the mail went out), as its journal line says: its history row and its run metric show it.
      await expectMailedRunEnded(gw, "mail-stop-1", "ok");
      expect(received).toEqual([["ops@example.org"]]);
    } finally {
      gw.home.cleanup();
    }
  });
});
