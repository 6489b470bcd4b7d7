import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { emailPlatform, type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import { startTestGateway, stopPastDrain, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * docs/delivery-targets.md (email): the warning after a mail some recipients missed names each with why
 * the last attempt failed. When that attempt was the retry the gateway's stop cut short while the server
 * held its answer (it had taken the mail), the reason is the stop's, not the refusal of an earlier attempt.
 */
const received: string[][] = [];
let server: FakeSmtp;
let refusals = 1;
let release: () => void = () => {};
const held = new Promise<void>((resolve) => {
  release = resolve;
});

beforeAll(async () => {
  server = await startFakeSmtp({
    received,
    // busy@ is refused for now once; its retry is taken, and the answer to it held.
    refuse: (address) => {
      if (address !== "busy@example.org" || refusals === 0) return undefined;
      refusals -= 1;
      return { code: 452, text: "Mailbox full" };
    },
    hold: (recipients) => (recipients.includes("busy@example.org") ? held : undefined),
  });
});
afterAll(async () => {
  release();
  await server.close();
});

describe("a mail's retry to the recipients refused for now, cut short by the gateway's stop", () => {
  it("names the cut-short attempt as why they missed it, not the earlier refusal", async () => {
    const gw = await startTestGateway({
      fakeSleeps: true,
      drainTimeoutMs: 1000,
      config: webhookConfig(
        { ci: { secret: "INSECURE_NO_AUTH", prompt: "build {n}", deliver: "email" } },
        {},
        {
          agent: { provider: "echo" },
          platforms: { email: emailPlatform(server.port, "ops@example.org, busy@example.org") },
        },
      ),
    });
    try {
      const res = await postJson(gw.url("/webhooks/ci"), { n: 1 }, { "X-Request-ID": "mail-cut-1" });
      expect(res.status).toBe(202);
      const retry = await vi.waitFor(
        () => {
          const line = gw.logs().find((l) => l.msg.includes("retry 1/3 in"));
          if (line === undefined) throw new Error("no retry yet");
          return Number(/retry 1\/3 in (\d+) ms/.exec(line.msg)?.[1]);
        },
        { timeout: 10_000, interval: 10 },
      );
      gw.clock.advance(retry);
      await vi.waitFor(() => expect(received).toEqual([["ops@example.org"], ["busy@example.org"]]), {
        timeout: 10_000,
        interval: 10,
      });
      await stopPastDrain(gw);
      const warnings = gw.logs().filter((l) => l.msg.includes("the other recipients got it"));
      expect(warnings.map((l) => l.msg)).toEqual([
        `[delivery] email: route "ci": not delivered to busy@example.org (the last attempt was cut short by the gateway's stop; the server may have taken it); the other recipients got it`,
      ]);
    } finally {
      await gw.stop();
    }
  });
});
