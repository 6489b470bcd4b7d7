import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { checkTargets } from "../../../src/io/targets/check.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import type { DeliveryMessage } from "../../../src/io/targets/target.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { startFakeSmtp } from "../../fakes/smtp.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loopbackDns, silentDns } from "../../helpers/silentDns.js";

const NOT_SHOWN = "(the value it gives is not shown)";
const v = (name: string) => `$\{${name}}`;

/**
 * docs/delivery-targets.md: what a `${VAR}` gave `platforms.email` is never quoted back. A DNS server that did
 * not answer for the SMTP host a variable gave made nodemailer's `DNS lookup for <host> timed out`, which the
 * start's check logged and each delivery failed with, the host as the variable gave it, from `.env` too: the
 * host was named as written only where the system's words it knew put it.
 */
// The target loads nodemailer at its first check or mail: loaded here, on the real clock.
beforeAll(() => import("nodemailer"));
let home: TempHome | undefined;
let undo: (() => void) | undefined;
afterEach(() => {
  vi.useRealTimers();
  undo?.();
  undo = undefined;
  home?.cleanup();
  home = undefined;
});

const MESSAGE: DeliveryMessage = {
  text: "hi",
  extra: {},
  written: {},
  route: "r",
  deliveryId: "d1",
  profile: undefined,
};

function emailConfig(settings: string, dotenv: string, env: Record<string, string> = {}) {
  home = tempHome();
  home.write("config.yaml", `platforms:\n  email: {enabled: true, secure: false, ${settings}}\n`);
  home.write(".env", dotenv);
  return loadConfig({ home: home.dir, env }).config;
}

/** A delivery's failure through the e-mail target of `config` ("sent" when it went). */
const deliver = (config: ReturnType<typeof emailConfig>) =>
  createTargets(config, { logger: captureLogger().logger })
    .get("email")
    ?.send(MESSAGE)
    .then(
      () => "sent",
      (err: Error) => err.message,
    );

/** Settles `work` with nodemailer's timers moved on a simulated clock, a second at a time. */
async function onSimulatedClock<T>(work: () => Promise<T>): Promise<PromiseSettledResult<T>> {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  let outcome: PromiseSettledResult<T> | undefined;
  work().then(
    (value) => (outcome = { status: "fulfilled", value }),
    (reason: unknown) => (outcome = { status: "rejected", reason }),
  );
  for (let second = 0; second < 60 && outcome === undefined; second++) {
    // The connection is made on turns of the event loop of its own.
    await new Promise((resolve) => setImmediate(resolve));
    await vi.advanceTimersByTimeAsync(1000);
  }
  if (outcome === undefined) throw new Error("still under way after a simulated minute");
  return outcome;
}

describe(`platforms.email.host a $\{VAR} gave, the DNS server not answering for it`, () => {
  it.each(["the environment", ".env"])(
    "from %s: the check's log line and a delivery name it as written",
    async (where) => {
      undo = silentDns((host) => host.endsWith(".example"));
      const value = "mail.topsecret.example";
      const config = emailConfig(
        `host: "${v("SMTP_HOST")}", port: 2525, timeout_seconds: 5, from: svc@example.org, home_channel: a@example.org`,
        where === ".env" ? `SMTP_HOST=${value}\n` : "",
        where === ".env" ? {} : { SMTP_HOST: value },
      );
      const log = captureLogger();
      const targets = createTargets(config, { logger: log.logger });
      await onSimulatedClock(() => checkTargets(targets, log.logger));
      const sent = await onSimulatedClock(async () => targets.get("email")?.send(MESSAGE));
      const failure = `email: EDNS — DNS lookup for "${v("SMTP_HOST")}" ${NOT_SHOWN} timed out`;
      expect(log.messages()).toEqual([`[delivery] email: credentials check failed — ${failure}`]);
      expect(sent.status === "rejected" && (sent.reason as Error).message).toBe(failure);
      expect(log.lines().join("\n")).not.toContain("topsecret");
    },
  );
});

/**
 * Nor does anything `.env` gave `platforms.email` reach a log where no hint names it as written: the target hid
 * only the password's forms, so a server's reply quoting such a value was logged and delivered as it came.
 */
describe("a value .env gave platforms.email, quoted back by the SMTP server", () => {
  it("is hidden from the delivery's failure", async () => {
    const address = "oncall-topsecret@example.org";
    const smtp = await startFakeSmtp({
      received: [],
      refuse: (to) =>
        to === address ? { code: 550, text: `5.1.1 <${to}>: Recipient address rejected` } : undefined,
    });
    try {
      const config = emailConfig(
        `host: 127.0.0.1, port: ${smtp.port}, from: svc@example.org, home_channel: "${v("MAILTO")}"`,
        `MAILTO=${address}\n`,
      );
      const targets = createTargets(config, { logger: captureLogger().logger });
      const failure = await targets
        .get("email")
        ?.send(MESSAGE)
        .then(
          () => "sent",
          (err: Error) => err.message,
        );
      expect(failure).toContain("5.1.1 <[redacted]>: Recipient address rejected");
      expect(failure).not.toContain("topsecret");
    } finally {
      await smtp.close();
    }
  });
});

/**
 * A short value `.env` gave (`SMTP_HOST=mail`, a compose service's name) was cut out of svc's own words and out of
 * the server's words wherever it stood inside one: `check platforms.e[redacted].host`, `550 [redacted]box`. It is
 * hidden in the system's and the server's words alone, and there only as a whole word.
 */
describe("a short value .env gave platforms.email, inside words", () => {
  it("the host (SMTP_HOST=mail): svc's hint keeps its words when nothing listens there", async () => {
    undo = loopbackDns((host) => host === "mail");
    const port = await closedPort();
    const config = emailConfig(
      `host: "${v("SMTP_HOST")}", port: ${port}, from: svc@example.org, home_channel: a@example.org`,
      "SMTP_HOST=mail\n",
    );
    expect(await deliver(config)).toBe(
      `email: ESOCKET — connect ECONNREFUSED 127.0.0.1:${port} — nothing listens on port ${port} of 127.0.0.1: start the SMTP server there, or check platforms.email.host and platforms.email.port`,
    );
  });

  it("the user (SMTP_USER=mail): svc's hint keeps its words", async () => {
    const port = await closedPort();
    const config = emailConfig(
      `host: 127.0.0.1, port: ${port}, user: "${v("SMTP_USER")}", password: pw-0123456789, from: svc@example.org, home_channel: a@example.org`,
      "SMTP_USER=mail\n",
    );
    expect(await deliver(config)).toBe(
      `email: ESOCKET — connect ECONNREFUSED 127.0.0.1:${port} — nothing listens on port ${port} of 127.0.0.1: start the SMTP server there, or check platforms.email.host and platforms.email.port`,
    );
  });

  it("the host (SMTP_HOST=mail): a server's reply keeps a word it is part of, and hides it as a word", async () => {
    undo = loopbackDns((host) => host === "mail");
    const smtp = await startFakeSmtp({
      received: [],
      refuse: () => ({ code: 550, text: "5.2.1 mailbox full; relaying through mail denied" }),
    });
    try {
      const config = emailConfig(
        `host: "${v("SMTP_HOST")}", port: ${smtp.port}, from: svc@example.org, home_channel: a@example.org`,
        "SMTP_HOST=mail\n",
      );
      const failure = await deliver(config);
      expect(failure).toContain("550 5.2.1 mailbox full; relaying through [redacted] denied");
      expect(failure).not.toMatch(/\bmail\b/);
    } finally {
      await smtp.close();
    }
  });
});

/**
 * A value `.env` gave with a display name (`MAIL_FROM="Alerts <alerts-topsecret@example.org>"`) was hidden only
 * whole, so a server's reply quoting the address alone (a sender refused at MAIL FROM, a recipient at RCPT TO)
 * showed it.
 */
describe("an address a value .env gave names beside a display name, quoted back by the SMTP server", () => {
  const delivered = async (
    settings: string,
    dotenv: string,
    refusing: Parameters<typeof startFakeSmtp>[0],
  ) => {
    const smtp = await startFakeSmtp(refusing);
    try {
      const log = captureLogger();
      const config = emailConfig(`host: 127.0.0.1, port: ${smtp.port}, ${settings}`, dotenv);
      const failure = await createTargets(config, { logger: log.logger })
        .get("email")
        ?.send(MESSAGE)
        .then(
          () => "sent",
          (err: Error) => err.message,
        );
      return { failure, log };
    } finally {
      await smtp.close();
    }
  };

  it("from: the sender refused at MAIL FROM", async () => {
    const { failure } = await delivered(
      `from: "${v("MAIL_FROM")}", home_channel: a@example.org`,
      `MAIL_FROM="Alerts <alerts-topsecret@example.org>"\n`,
      {
        received: [],
        refuseSender: (from) => ({
          code: 553,
          text: `5.7.1 <${from}>: Sender address rejected: not owned by user`,
        }),
      },
    );
    expect(failure).toContain("553 5.7.1 <[redacted]>: Sender address rejected: not owned by user");
    expect(failure).not.toContain("topsecret");
  });

  it("home_channel of one recipient: the recipient refused at RCPT TO", async () => {
    const { failure } = await delivered(
      `from: svc@example.org, home_channel: "${v("ONCALL")}"`,
      `ONCALL="On call <oncall-topsecret@example.org>"\n`,
      { received: [], refuse: (to) => ({ code: 550, text: `5.1.1 <${to}>: Recipient address rejected` }) },
    );
    expect(failure).toContain("550 5.1.1 <[redacted]>: Recipient address rejected");
    expect(failure).not.toContain("topsecret");
  });

  it("home_channel naming several recipients: each address stays shown, as the warning names it", async () => {
    const { failure, log } = await delivered(
      `from: svc@example.org, home_channel: "${v("ONCALL")}"`,
      `ONCALL="On call <oncall@example.org>, busy@example.org"\n`,
      {
        received: [],
        refuse: (to) =>
          to === "busy@example.org"
            ? { code: 550, text: `5.1.1 <${to}>: Recipient address rejected` }
            : undefined,
      },
    );
    expect(failure).toBe("sent");
    expect(log.messages()).toEqual([
      `[delivery] email: route "r": not delivered to busy@example.org (550 5.1.1 <busy@example.org>: Recipient address rejected); the other recipients got it`,
    ]);
  });
});

describe(`platforms.email.from a $\{VAR} gave that names no address`, () => {
  // The check's log line and each delivery quoted it as the variable gave it (`from "svc-topsecret"`).
  it("is named as written", async () => {
    const config = emailConfig(
      `host: 127.0.0.1, port: 1, from: "${v("MAIL_FROM")}", home_channel: a@example.org`,
      "MAIL_FROM=svc-topsecret\n",
    );
    const log = captureLogger();
    const targets = createTargets(config, { logger: log.logger });
    await checkTargets(targets, log.logger);
    const failure = `email: platforms.email.from "${v("MAIL_FROM")}" ${NOT_SHOWN} names no e-mail address — nothing sent (a mail without a From address is refused or dropped by the receiving mailbox); write it as svc@example.com or "svc <svc@example.com>"`;
    expect(log.messages()).toEqual([`[delivery] email: credentials check failed — ${failure}`]);
    await expect(targets.get("email")?.send(MESSAGE)).rejects.toThrow(failure);
  });
});

describe("a value .env gave a setting that is neither where nor as whom svc sends", () => {
  // Every value .env gave under platforms.email was hidden: SUBJECT=Alerts hid the word in the server's reply.
  it("the subject stays in a server's reply, the user is hidden", async () => {
    const smtp = await startFakeSmtp({
      received: [],
      refuse: (to) => ({
        code: 550,
        text: `5.7.1 <${to}>: relaying for ops-topsecret denied; message Alerts rejected by policy`,
      }),
    });
    try {
      const config = emailConfig(
        `host: 127.0.0.1, port: ${smtp.port}, user: "${v("SMTP_USER")}", password: pw-0123456789, subject: "${v("SUBJECT")}", from: svc@example.org, home_channel: a@example.org`,
        "SMTP_USER=ops-topsecret\nSUBJECT=Alerts\n",
      );
      expect(await deliver(config)).toBe(
        "email: EENVELOPE — 550 5.7.1 <a@example.org>: relaying for [redacted] denied; message Alerts rejected by policy",
      );
    } finally {
      await smtp.close();
    }
  });
});
