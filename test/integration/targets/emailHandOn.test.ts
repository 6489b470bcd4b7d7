import { type AddressInfo, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import { DEFAULT_RETRY, retryingSteps } from "../../../src/io/targets/retry.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { emailPlatform, type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import { message, recordedRetries } from "./support.js";

/**
 * docs/delivery-targets.md (email, "Retries"): a mail the server took for some recipients and refused for
 * now for others counts as sent, and a warning names each recipient that did not get it — whether the
 * retries for those end on this instance, on the one that took the delivery over, or at the gateway's stop.
 */
const received: string[][] = [];
/** Replies to the next RCPT TO of an address, in order (then it is accepted). */
const refusals = new Map<string, { code: number; text: string }[]>();
let server: FakeSmtp;
let port: number;

beforeAll(async () => {
  server = await startFakeSmtp({ received, refuse: (address) => refusals.get(address)?.shift() });
  port = server.port;
});
afterAll(() => server.close());

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, "127.0.0.1", () => {
      const { port: free } = probe.address() as AddressInfo;
      probe.close(() => resolve(free));
    });
  });

function emailTo(list: string, smtpPort: number) {
  const config = configSchema.parse({
    platforms: {
      email: emailPlatform(smtpPort, list),
    },
  });
  const log = captureLogger();
  const target = createTargets(config, { logger: log.logger }).get("email");
  if (target === undefined) throw new Error("email not built");
  return { target, warnings: () => log.messages().filter((m) => m.includes("not delivered to")) };
}

describe("email: the recipients refused for now whose retries end without the mail", () => {
  it("handed on, with no SMTP server reachable on this instance: counted sent (the others got it before), and a warning names who missed it and why", async () => {
    const closed = await freePort();
    const { target, warnings } = emailTo("ops@example.org, busy@example.org", closed);
    const { runStep, waits } = recordedRetries();
    await expect(
      target.send(message("Agent reply."), undefined, { runStep, recipients: ["busy@example.org"] }),
    ).resolves.toEqual({ chatId: "ops@example.org, busy@example.org" });
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toContain(
      "not delivered to busy@example.org (refused for now on an earlier attempt)",
    );
    expect(warnings()[0]).toContain(
      `(the last attempt: email: ESOCKET — connect ECONNREFUSED 127.0.0.1:${closed}`,
    );
    expect(warnings()[0]).toContain("; the other recipients got it");
    expect(warnings()[0]).not.toContain("ops@example.org");
  });

  it("handed on, the retry goes through: no warning", async () => {
    received.length = 0;
    const { target, warnings } = emailTo("ops@example.org, busy@example.org", port);
    const { runStep } = recordedRetries();
    await target.send(message("Agent reply."), undefined, { runStep, recipients: ["busy@example.org"] });
    expect(received).toEqual([["busy@example.org"]]);
    expect(warnings()).toEqual([]);
  });

  describe("the gateway's stop during the wait for those recipients' retry", () => {
    /** A send whose first retry's wait is ended by the stop, as the deliverer's wait ends then. */
    async function stoppedInTheWait(handsOn: boolean) {
      received.length = 0;
      refusals.set("busy@example.org", [{ code: 452, text: "Mailbox full" }]);
      const { target, warnings } = emailTo("ops@example.org, busy@example.org", port);
      const stop = new AbortController();
      const runStep = retryingSteps(
        DEFAULT_RETRY,
        async () => {
          stop.abort(new Error("the gateway stopped"));
          throw stop.signal.reason;
        },
        () => {},
        stop.signal,
      );
      const outcome = await target.send(message("Agent reply."), stop.signal, { runStep, handsOn }).then(
        () => "sent",
        (err: unknown) => `thrown: ${(err as Error).message}`,
      );
      refusals.clear();
      return { outcome, warnings: warnings() };
    }

    it("state.backend: redis (another instance goes on with it): the run is kept, nothing said yet", async () => {
      const { outcome, warnings } = await stoppedInTheWait(true);
      expect(outcome).toBe("thrown: the gateway stopped");
      expect(received).toEqual([["ops@example.org"]]);
      expect(warnings).toEqual([]);
    });

    it("state.backend: local (a replay would mail the whole list again): counted sent, and a warning names who missed it", async () => {
      const { outcome, warnings } = await stoppedInTheWait(false);
      expect(outcome).toBe("sent");
      expect(received).toEqual([["ops@example.org"]]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(
        "not delivered to busy@example.org (452 Mailbox full); the other recipients got it",
      );
    });
  });
});
