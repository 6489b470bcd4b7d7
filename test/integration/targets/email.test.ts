import { type AddressInfo, createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { messageIdFor } from "../../../src/io/targets/email.js";
import { createTargets } from "../../../src/io/targets/registry.js";
import { DeliveryError } from "../../../src/io/targets/target.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { message, recordedRetries, registryFor } from "./support.js";

interface Received {
  from: string | undefined;
  to: string[];
  data: string;
  user: string | undefined;
}

const received: Received[] = [];
let rejectNext: { code: number; text: string } | undefined;
/** Replies to the next RCPT TO of an address, in order (then it is accepted). */
const refusals = new Map<string, { code: number; text: string }[]>();
/** Refuse the next message after its data arrived, as a lost answer looks to the client. */
let failDataNext = false;
let server: SMTPServer;
let port: number;

beforeAll(async () => {
  server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onAuth(auth, _session, callback) {
      if (auth.username === "svc" && auth.password === "SMTP-SECRET") callback(null, { user: auth.username });
      else callback(new Error("Invalid username or password"));
    },
    onRcptTo(address, _session, callback) {
      const refusal = refusals.get(address.address)?.shift();
      if (refusal !== undefined) {
        callback(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
        return;
      }
      if (rejectNext !== undefined) {
        const err = Object.assign(new Error(rejectNext.text), { responseCode: rejectNext.code });
        rejectNext = undefined;
        callback(err);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        received.push({
          from: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString("utf8"),
          user: session.user as string | undefined,
        });
        if (failDataNext) {
          failDataNext = false;
          callback(Object.assign(new Error("Timeout waiting for queue"), { responseCode: 451 }));
          return;
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/**
 * An SMTP server offering one AUTH mechanism whose 535 reply quotes the line it refused: the `AUTH PLAIN`
 * command with its base64, or (after `AUTH LOGIN` and the user name) the base64 of the password.
 */
function quotingSmtpServer(mechanism: string): Server {
  return createServer((socket) => {
    socket.setEncoding("utf8");
    let buffered = "";
    socket.write("220 quoting ESMTP\r\n");
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      for (let end = buffered.indexOf("\r\n"); end >= 0; end = buffered.indexOf("\r\n")) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (/^EHLO/i.test(line)) socket.write(`250-quoting\r\n250 AUTH ${mechanism}\r\n`);
        else if (/^AUTH LOGIN/i.test(line)) socket.write("334 VXNlcm5hbWU6\r\n");
        else if (line === Buffer.from("svc").toString("base64")) socket.write("334 UGFzc3dvcmQ6\r\n");
        else if (/^QUIT/i.test(line)) socket.end("221 bye\r\n");
        else socket.write(`535 5.7.8 Authentication failed: ${line}\r\n`);
      }
    });
  });
}

const settings = () => ({
  enabled: true,
  host: "127.0.0.1",
  port,
  secure: false,
  user: "svc",
  password: "SMTP-SECRET",
  from: "svc@example.org",
  home_channel: "ops@example.org",
});

describe("email target against a real SMTP server (smtp-server)", () => {
  it("authenticates and sends the message to deliver_extra.chat_id with the route in the subject", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    const receipt = await target?.send(
      message("Deploy finished.\nAll green.", { chat_id: "dev@example.org" }),
    );
    expect(receipt?.chatId).toBe("dev@example.org");
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ from: "svc@example.org", to: ["dev@example.org"], user: "svc" });
    expect(received[0]?.data).toMatch(/^Subject: \[svc\] alerts$/m);
    expect(received[0]?.data).toContain("Deploy finished.\r\nAll green.");
  });

  it("marks the mail as sent by a program (Auto-Submitted: auto-generated), so vacation auto-replies do not answer it", async () => {
    received.length = 0;
    await registryFor({ email: settings() }).get("email")?.send(message("Build 5 failed"));
    const [head] = received[0]?.data.split("\r\n\r\n") ?? [];
    expect(head).toMatch(/^Auto-Submitted: auto-generated$/m);
  });

  it("a deliver_extra.subject that renders blank falls back to the platform's subject", async () => {
    const registry = registryFor({ email: settings() });
    await registry.get("email")?.send(message("Disk full", { chat_id: "a@example.org", subject: "  " }));
    expect(received.at(-1)?.data).toMatch(/^Subject: \[svc\] alerts\r$/m);
  });

  it("a subject rendered from payload text with line breaks stays one header: no injected Bcc, no early body", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    const subject = "Build failed\r\nBcc: intruder@example.net\r\n\r\nforged body\nX-Extra: 1";
    await target?.send(message("Real body.", { chat_id: "a@example.org", subject }));
    expect(received.map((r) => r.to)).toEqual([["a@example.org"]]);
    const [head, ...body] = received[0]?.data.split("\r\n\r\n") ?? [];
    expect(head).toMatch(/^Subject: Build failed\s+Bcc: intruder@example\.net\s+forged body X-Extra: 1\r?$/m);
    expect(head).not.toMatch(/^(?:Bcc|X-Extra):/im);
    expect(body.join("\r\n\r\n")).not.toContain("forged body");
  });

  it("a subject with NEL, U+2028 or U+2029 from payload text has spaces for them, as for CR and LF", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    const subject = "Build\u2028failed\u2029on\u0085main";
    await target?.send(message("Real body.", { chat_id: "a@example.org", subject }));
    const [head] = received[0]?.data.split("\r\n\r\n") ?? [];
    expect(head).toMatch(/^Subject: Build failed on main\r?$/m);
  });

  it("a NUL or a lone surrogate from payload text is sent as U+FFFD, in the body and the subject (a mail holds no NUL, RFC 5322)", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    await target?.send(
      message("a\u0000b \ud800 café", { chat_id: "a@example.org", subject: "s\u0000t \udc00 été" }),
    );
    const [head = "", ...rest] = received[0]?.data.split("\r\n\r\n") ?? [];
    const body = rest.join("\r\n\r\n");
    expect(body).not.toContain("=00");
    expect(body).toContain("a=EF=BF=BDb =EF=BF=BD caf=C3=A9");
    const words = [...head.matchAll(/=\?UTF-8\?([BQ])\?([^?]*)\?=/gi)].map(([, kind, text = ""]) =>
      kind?.toUpperCase() === "B"
        ? Buffer.from(text, "base64").toString("utf8")
        : Buffer.from(
            text
              .replace(/_/g, " ")
              .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) =>
                String.fromCharCode(Number.parseInt(hex, 16)),
              ),
            "latin1",
          ).toString("utf8"),
    );
    expect(words.join("")).toBe("s\ufffdt \ufffd été");
  });

  it("a subject from payload text with a run longer than a mail line may be (998, RFC 5322) is cut, so no header line is over it", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    const hash = "f".repeat(1200);
    await target?.send(message("Real body.", { subject: `Deploy ${hash}` }));
    const [head] = received[0]?.data.split("\r\n\r\n") ?? [];
    for (const line of (head ?? "").split("\r\n")) expect(line.length).toBeLessThanOrEqual(998);
    // Q-encoded words keep the letters as they are: "Deploy ", 892 of the f's, then "…" (=E2=80=A6).
    const subject = /^Subject:.*(?:\r\n[ \t].*)*/m.exec(head ?? "")?.[0] ?? "";
    expect(subject.match(/f/g)?.length).toBe(892);
    expect(subject).toMatch(/=E2=80=A6\?=$/);
    // A subject within the limit is sent whole.
    await target?.send(message("Real body.", { subject: `Deploy ${"f".repeat(800)}` }));
    // (folded at its space: unfolded, it is the subject as written)
    expect(received[1]?.data.replaceAll(/\r\n[ \t]+/g, " ")).toContain(
      `Subject: Deploy ${"f".repeat(800)}\r\n`,
    );
  });

  it("falls back to deliver_extra.to, then home_channel", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    await target?.send(message("a", { to: "to@example.org" }));
    await target?.send(message("b"));
    expect(received.map((r) => r.to)).toEqual([["to@example.org"], ["ops@example.org"]]);
  });

  it("refuses a recipient with a line break (from payload text) instead of sending to an injected Bcc", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    for (const chat_id of [
      "dev@example.org\r\nBcc: other@example.net",
      "dev@example.org\nother@example.net",
      // Read as spaces by nodemailer's parser: "alice <bob@example.org>" would go to bob.
      "alice\u2028bob@example.org",
      "alice\u2029bob@example.org",
      "dev@example.org\u0085other@example.org",
      "alice\u009b31m@example.org",
    ]) {
      const error = await target?.send(message("x", { chat_id })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).transient).toBe(false);
      expect((error as Error).message).toContain("the recipient contains a line break or control character");
    }
    expect(received).toEqual([]);
  });

  it("names a recipient that is no address (a {template} the event did not fill) instead of 'No recipients defined'", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    const unfilled = await target?.send(message("x", { to: "{user.email}" })).catch((e: unknown) => e);
    expect(unfilled).toBeInstanceOf(DeliveryError);
    expect((unfilled as DeliveryError).transient).toBe(false);
    expect((unfilled as Error).message).toBe(
      'email: route "alerts": the recipient "{user.email}" is no e-mail address (a template the event did not fill) — nothing sent',
    );
    const word = await target?.send(message("x", { chat_id: "oncall" })).catch((e: unknown) => e);
    expect((word as Error).message).toBe(
      'email: route "alerts": the recipient "oncall" is no e-mail address — nothing sent',
    );
    // Quoted at most 100 characters: a cut inside an emoji leaves it out whole, not half of it.
    const long = await target
      ?.send(message("x", { to: `${"x".repeat(99)}😀 rest` }))
      .catch((e: unknown) => e);
    expect((long as Error).message).toBe(
      `email: route "alerts": the recipient "${"x".repeat(99)}" is no e-mail address — nothing sent`,
    );
    expect(received).toEqual([]);
    // A display name with its address still goes out.
    await target?.send(message("x", { to: "On Call <oncall@example.org>" }));
    expect(received.map((r) => r.to)).toEqual([["oncall@example.org"]]);
  });

  it("a recipient with text around a placeholder the event did not fill ({user.login}@example.org) is refused, not mailed to that address", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    const unfilled = await target
      ?.send(message("x", { to: "{user.login}@example.org" }))
      .catch((e: unknown) => e);
    expect(unfilled).toBeInstanceOf(DeliveryError);
    expect((unfilled as DeliveryError).transient).toBe(false);
    expect((unfilled as Error).message).toBe(
      'email: deliver_extra.to of route "alerts" did not resolve ("{user.login}@example.org" holds {user.login}, a placeholder the event did not fill: it has no such field) — the message is not sent (never redirected to another address)',
    );
    expect(received).toEqual([]);
  });

  it("a from that names no address (from: svc) sends nothing: the mail would go with no From header and a null sender, which mailboxes refuse or drop", async () => {
    received.length = 0;
    const target = registryFor({ email: { ...settings(), from: "svc" } }).get("email");
    const expected =
      'email: platforms.email.from "svc" names no e-mail address — nothing sent (a mail without a From address is refused or dropped by the receiving mailbox); write it as svc@example.com or "svc <svc@example.com>"';
    const checked = await target?.check?.().catch((e: unknown) => e);
    expect((checked as Error).message).toBe(expected);
    const sent = await target?.send(message("x")).catch((e: unknown) => e);
    expect(sent).toBeInstanceOf(DeliveryError);
    expect((sent as DeliveryError).transient).toBe(false);
    expect((sent as Error).message).toBe(expected);
    expect(received).toEqual([]);
    // With its address, a display name goes out as before.
    await registryFor({ email: { ...settings(), from: "svc <svc@example.org>" } })
      .get("email")
      ?.send(message("x"));
    expect(received.map((r) => r.from)).toEqual(["svc@example.org"]);
  });

  it("refuses a deliver_extra recipient (payload text) that names more than one address; home_channel may list several", async () => {
    received.length = 0;
    const target = registryFor({ email: settings() }).get("email");
    for (const extra of [
      { chat_id: "dev@example.org, other@example.net" },
      { chat_id: "dev@example.org;other@example.net" },
      { to: "list: other@example.net, third@example.net;" },
    ]) {
      const error = await target?.send(message("x", extra)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryError);
      expect((error as DeliveryError).transient).toBe(false);
      expect((error as Error).message).toContain("deliver_extra names more than one recipient");
    }
    expect(received).toEqual([]);
    await target?.send(message("y", { chat_id: '"Doe, Jane" <dev@example.org>' }));
    const listed = registryFor({
      email: { ...settings(), home_channel: "ops@example.org, oncall@example.org" },
    }).get("email");
    await listed?.send(message("z"));
    expect(received.map((r) => r.to)).toEqual([
      ["dev@example.org"],
      ["ops@example.org", "oncall@example.org"],
    ]);
  });

  it("verifies the SMTP login at startup and fails it with bad credentials (no password in the error)", async () => {
    await expect(registryFor({ email: settings() }).get("email")?.check?.()).resolves.toBe(
      `127.0.0.1:${port}`,
    );
    const bad = registryFor({ email: { ...settings(), password: "WRONG-PASSWORD" } }).get("email");
    const error = await bad?.check?.().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as Error).message).toMatch(/EAUTH/);
    // A 5xx refusal of the login is the settings' (5.7.8 bad credentials): the failure names them.
    expect((error as Error).message).toMatch(
      / — the server refused the login: check platforms\.email\.user and platforms\.email\.password$/,
    );
    expect((error as DeliveryError).transient).toBe(false);
    expect((error as Error).message).not.toContain("WRONG-PASSWORD");
  });

  it("keeps the password out of the error when the server quotes the refused AUTH command (its base64 included)", async () => {
    const password = "Quoted-Smtp-Passw0rd";
    const forms = [
      password,
      Buffer.from(password).toString("base64"),
      Buffer.from(`\u0000svc\u0000${password}`).toString("base64"),
    ];
    for (const mechanism of ["PLAIN", "LOGIN"]) {
      const quoting = quotingSmtpServer(mechanism);
      await new Promise<void>((resolve) => quoting.listen(0, "127.0.0.1", resolve));
      try {
        const quotingPort = (quoting.address() as AddressInfo).port;
        const target = registryFor({ email: { ...settings(), port: quotingPort, password } }).get("email");
        for (const attempt of [
          () => target?.check?.(),
          () => target?.send(message("x", { chat_id: "a@example.org" })),
        ]) {
          const error = await attempt()?.catch((e: unknown) => e);
          expect(error).toBeInstanceOf(DeliveryError);
          expect((error as Error).message).toContain("535 5.7.8 Authentication failed: ");
          expect((error as Error).message).toContain("[redacted]");
          for (const form of forms) expect((error as Error).message).not.toContain(form);
        }
      } finally {
        await new Promise<void>((resolve) => quoting.close(() => resolve()));
      }
    }
  });

  it("quotes a server's multi-line reply on one line (Gmail's 535-5.7.8 refusal of a login)", async () => {
    const gmailLike = createServer((socket) => {
      socket.setEncoding("utf8");
      socket.write("220 smtp.example.org ESMTP\r\n");
      socket.on("data", (chunk: string) => {
        for (const line of chunk.split("\r\n").filter((l) => l !== "")) {
          if (/^EHLO/i.test(line)) socket.write("250-smtp.example.org\r\n250 AUTH PLAIN\r\n");
          else if (/^QUIT/i.test(line)) socket.end("221 bye\r\n");
          else
            socket.write(
              "535-5.7.8 Username and Password not accepted. For more information, go to\r\n535 5.7.8  https://support.google.com/mail/?p=BadCredentials a640c23a62f3a-gsmtp\r\n",
            );
        }
      });
    });
    await new Promise<void>((resolve) => gmailLike.listen(0, "127.0.0.1", resolve));
    try {
      const gmailPort = (gmailLike.address() as AddressInfo).port;
      const target = registryFor({ email: { ...settings(), port: gmailPort } }).get("email");
      for (const attempt of [
        () => target?.check?.(),
        () => target?.send(message("x", { chat_id: "a@example.org" })),
      ]) {
        const error = await attempt()?.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DeliveryError);
        expect((error as Error).message).toBe(
          "email: EAUTH — 535-5.7.8 Username and Password not accepted. For more information, go to 535 5.7.8 https://support.google.com/mail/?p=BadCredentials a640c23a62f3a-gsmtp — the server refused the login: check platforms.email.user and platforms.email.password",
        );
      }
    } finally {
      await new Promise<void>((resolve) => gmailLike.close(() => resolve()));
    }
  });

  it("sends a mail again with the same Message-ID, so the mailbox shows one; other deliveries get their own", async () => {
    received.length = 0;
    const target = registryFor({ email: { ...settings(), from: "svc <svc@example.org>" } }).get("email");
    failDataNext = true;
    const { waits, runStep } = recordedRetries();
    await target?.send(message("Disk full", { chat_id: "a@example.org" }), undefined, { runStep });
    expect(waits).toEqual([1000]);
    const ids = received.map((r) => /^Message-ID: (.*)\r$/m.exec(r.data)?.[1]);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toMatch(/^<svc-[0-9a-f]{32}@example\.org>$/);
    expect(ids[1]).toBe(ids[0]);
    const other = messageIdFor(message("Disk full", {}, { deliveryId: "d2" }), "svc <svc@example.org>");
    expect(other).toMatch(/^<svc-[0-9a-f]{32}@example\.org>$/);
    expect(other).not.toBe(ids[0]);
  });

  it("gives another reply under the same delivery id its own Message-ID (a mailbox would hide it behind the first)", () => {
    // GitHub's "Redeliver" keeps X-GitHub-Delivery; once the idempotency hour is over it runs again.
    const first = messageIdFor(message("Review: looks good", {}), "svc <svc@example.org>");
    const again = messageIdFor(message("Review: looks good", {}), "svc <svc@example.org>");
    const second = messageIdFor(message("Review: needs a test", {}), "svc <svc@example.org>");
    expect(again).toBe(first);
    expect(second).toMatch(/^<svc-[0-9a-f]{32}@example\.org>$/);
    expect(second).not.toBe(first);
  });

  it("secure: true against a STARTTLS port (a plain-text greeting where TLS was expected) fails at once, saying to set secure: false", async () => {
    received.length = 0;
    const target = registryFor({ email: { ...settings(), secure: true } }).get("email");
    const expected =
      "email: the server answered in plain text where secure: true expects TLS from the start — not retried; a server on a STARTTLS port (587, 25) takes secure: false (secure: true is for port 465)";
    const checked = await target?.check?.().catch((e: unknown) => e);
    expect((checked as Error).message).toBe(expected);
    const { waits, runStep } = recordedRetries();
    const sent = await target?.send(message("x"), undefined, { runStep }).catch((e: unknown) => e);
    expect(sent).toBeInstanceOf(DeliveryError);
    expect((sent as DeliveryError).transient).toBe(false);
    expect((sent as Error).message).toBe(expected);
    expect(waits).toEqual([]);
    expect(received).toEqual([]);
  });

  it("a port where nothing listens is named with what to check (the SMTP server, host and port), and retried", async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    const target = registryFor({ email: { ...settings(), port: closed } }).get("email");
    const sent = await target?.send(message("x")).catch((e: unknown) => e);
    expect((sent as DeliveryError).transient).toBe(true);
    expect((sent as Error).message).toBe(
      `email: ESOCKET — connect ECONNREFUSED 127.0.0.1:${closed} — nothing listens on port ${closed} of 127.0.0.1: start the SMTP server there, or check platforms.email.host and platforms.email.port`,
    );
  });

  it("classifies a 4xx SMTP reply as transient and a 5xx as permanent", async () => {
    const target = registryFor({ email: settings() }).get("email");
    rejectNext = { code: 451, text: "Try again later" };
    const soft = await target?.send(message("x", { chat_id: "a@example.org" })).catch((e: unknown) => e);
    expect((soft as DeliveryError).transient).toBe(true);
    rejectNext = { code: 550, text: "No such user" };
    const hard = await target?.send(message("x", { chat_id: "a@example.org" })).catch((e: unknown) => e);
    expect((hard as DeliveryError).transient).toBe(false);
    expect((hard as Error).message).toContain("No such user");
  });

  it("a home_channel list the server takes only in part: a recipient refused for now gets it on a retry, one refused for good is named in a warning", async () => {
    received.length = 0;
    const log = captureLogger();
    const config = configSchema.parse({
      platforms: {
        email: { ...settings(), home_channel: "ops@example.org, busy@example.org, gone@example.org" },
      },
    });
    const target = createTargets(config, { logger: log.logger }).get("email");
    refusals.set("busy@example.org", [{ code: 451, text: "Mailbox busy, try later" }]);
    refusals.set("gone@example.org", [{ code: 550, text: "No such user here" }]);
    const { waits, runStep } = recordedRetries();
    await target?.send(message("Deploy finished."), undefined, { runStep });
    expect(waits).toEqual([1000]);
    // The same mail (headers, Message-ID) to the one refused for now, alone.
    expect(received.map((r) => r.to)).toEqual([["ops@example.org"], ["busy@example.org"]]);
    const ids = received.map((r) => /^Message-ID: (.*)$/im.exec(r.data)?.[1]);
    expect(ids[1]).toBe(ids[0]);
    expect(received[1]?.data).toMatch(/^To: ops@example.org, busy@example.org, gone@example.org$/m);
    const warnings = log.messages().filter((m) => m.includes("not delivered to"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("gone@example.org (550 No such user here)");
    expect(warnings[0]).not.toContain("busy@example.org");
  });

  it("a recipient still refused for now when the retries end, or in direct mode, is named in a warning; the others got the mail", async () => {
    received.length = 0;
    const log = captureLogger();
    const config = configSchema.parse({
      platforms: { email: { ...settings(), home_channel: "ops@example.org, busy@example.org" } },
    });
    const target = createTargets(config, { logger: log.logger }).get("email");
    const busy = { code: 452, text: "Mailbox full" };
    refusals.set("busy@example.org", [busy, busy, busy, busy]);
    const { waits, runStep } = recordedRetries();
    await expect(target?.send(message("Agent reply."), undefined, { runStep })).resolves.toBeDefined();
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(received.map((r) => r.to)).toEqual([["ops@example.org"]]);
    refusals.set("busy@example.org", [busy]);
    await expect(target?.send(message("Direct."))).resolves.toBeDefined();
    const warnings = log.messages().filter((m) => m.includes("not delivered to"));
    expect(warnings).toHaveLength(2);
    for (const warning of warnings) expect(warning).toContain("busy@example.org (452 Mailbox full)");
    refusals.clear();
  });

  it("handed on with the recipients refused for now, mails those alone; with ones the list no longer names, all", async () => {
    received.length = 0;
    const config = configSchema.parse({
      platforms: { email: { ...settings(), home_channel: "ops@example.org, busy@example.org" } },
    });
    const target = createTargets(config, { logger: captureLogger().logger }).get("email");
    const { runStep } = recordedRetries();
    await target?.send(message("Agent reply."), undefined, { runStep, recipients: ["busy@example.org"] });
    await target?.send(message("Agent reply."), undefined, { runStep, recipients: ["gone@example.org"] });
    expect(received.map((r) => r.to)).toEqual([
      ["busy@example.org"],
      ["ops@example.org", "busy@example.org"],
    ]);
  });

  it("a recipient refused for now, then for good on its retry, is named with the final reply", async () => {
    received.length = 0;
    const log = captureLogger();
    const config = configSchema.parse({
      platforms: { email: { ...settings(), home_channel: "ops@example.org, gone@example.org" } },
    });
    const target = createTargets(config, { logger: log.logger }).get("email");
    refusals.set("gone@example.org", [
      { code: 450, text: "Mailbox busy" },
      { code: 550, text: "No such user here" },
    ]);
    const { runStep } = recordedRetries();
    await expect(target?.send(message("Agent reply."), undefined, { runStep })).resolves.toBeDefined();
    const warnings = log.messages().filter((m) => m.includes("not delivered to"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("gone@example.org (550 No such user here)");
    expect(warnings[0]).not.toContain("450");
    refusals.clear();
  });
});

/** An address of this machine's own that is not loopback (a server there is reached as over a network). */
const networkAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal)?.address;

describe.skipIf(networkAddress === undefined)(
  "email: a login is never sent in clear off this machine",
  () => {
    const logins: string[] = [];
    let plain: SMTPServer;
    let plainPort: number;
    beforeAll(async () => {
      plain = new SMTPServer({
        authOptional: true,
        disabledCommands: ["STARTTLS"],
        onAuth(auth, _session, callback) {
          logins.push(auth.password ?? "");
          callback(null, { user: auth.username });
        },
        onData(stream, _session, callback) {
          stream.resume();
          stream.on("end", () => callback());
        },
      });
      await new Promise<void>((resolve) => plain.listen(0, networkAddress, resolve));
      plainPort = (plain.server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => plain.close(() => resolve())));

    it("a server there that offers no STARTTLS fails the check and the delivery, and never sees the password", async () => {
      const target = registryFor({
        email: { ...settings(), host: networkAddress, port: plainPort },
      }).get("email");
      for (const attempt of [
        () => target?.check?.(),
        () => target?.send(message("x", { chat_id: "a@example.org" })),
      ]) {
        const error = await attempt()?.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DeliveryError);
        expect((error as DeliveryError).transient).toBe(false);
        expect((error as Error).message).toContain("offers no STARTTLS");
      }
      expect(logins).toEqual([]);
    });

    it("without a login the mail goes as before (nothing secret on the wire)", async () => {
      const { user: _user, password: _password, ...open } = settings();
      const target = registryFor({ email: { ...open, host: networkAddress, port: plainPort } }).get("email");
      await expect(target?.send(message("x", { chat_id: "a@example.org" }))).resolves.toMatchObject({
        chatId: "a@example.org",
      });
    });
  },
);

/**
 * A relay that offers STARTTLS with a certificate no CA vouches for (smtp-server's built-in one: self-signed
 * and expired), as a distribution's default Postfix does with its snakeoil certificate.
 */
function snakeoilRelay(host: string): Promise<{ server: SMTPServer; port: number; received: string[] }> {
  const received: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        received.push(`${session.secure ? "tls" : "plain"} ${Buffer.concat(chunks).toString("utf8")}`);
        callback();
      });
    },
  });
  return new Promise((resolve) =>
    server.listen(0, host, () =>
      resolve({ server, port: (server.server.address() as AddressInfo).port, received }),
    ),
  );
}

describe("email: a relay whose STARTTLS certificate no CA vouches for", () => {
  it("on loopback (the local Postfix's snakeoil certificate) the mail goes, over TLS: it never leaves this machine", async () => {
    const relay = await snakeoilRelay("127.0.0.1");
    try {
      for (const host of ["127.0.0.1", "localhost"]) {
        relay.received.length = 0;
        const target = registryFor({
          email: {
            enabled: true,
            host,
            port: relay.port,
            from: "svc@example.org",
            home_channel: "ops@example.org",
          },
        }).get("email");
        await expect(target?.check?.()).resolves.toBe(`${host}:${relay.port}`);
        await expect(target?.send(message("Build 5 done"))).resolves.toMatchObject({
          chatId: "ops@example.org",
        });
        expect(relay.received).toHaveLength(1);
        expect(relay.received[0]).toMatch(/^tls [\s\S]*Build 5 done/);
      }
    } finally {
      await new Promise<void>((resolve) => relay.server.close(() => resolve()));
    }
  });

  it.skipIf(networkAddress === undefined)(
    "off this machine the certificate is still verified: nothing is sent, and no retry is made (a certificate does not change between attempts)",
    async () => {
      const relay = await snakeoilRelay(networkAddress ?? "");
      try {
        const target = registryFor({
          email: {
            enabled: true,
            host: networkAddress,
            port: relay.port,
            from: "svc@example.org",
            home_channel: "ops@example.org",
          },
        }).get("email");
        const { waits, runStep } = recordedRetries();
        const error = await target
          ?.send(message("Build 5 done"), undefined, { runStep })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DeliveryError);
        expect((error as DeliveryError).transient).toBe(false);
        expect((error as Error).message).toMatch(
          /^email: the server's TLS certificate is not trusted \(CERT_HAS_EXPIRED: certificate has expired\) — not retried/,
        );
        expect(waits).toEqual([]);
        const checked = await target?.check?.().catch((e: unknown) => e);
        expect((checked as Error).message).toContain("TLS certificate is not trusted");
        expect(relay.received).toEqual([]);
      } finally {
        await new Promise<void>((resolve) => relay.server.close(() => resolve()));
      }
    },
  );
});

/** Whether this machine has IPv6 loopback (a container may not). */
const ipv6Loopback = await new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once("error", () => resolve(false));
  probe.listen(0, "::1", () => probe.close(() => resolve(true)));
});

describe.skipIf(!ipv6Loopback)("email: an IPv6 host", () => {
  it("written in brackets ([::1], as URLs write it) is the address itself, not a name to look up", async () => {
    const delivered: string[] = [];
    const relay = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, _session, callback) {
        stream.resume();
        stream.on("end", () => {
          delivered.push("mail");
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => relay.listen(0, "::1", resolve));
    try {
      const relayPort = (relay.server.address() as AddressInfo).port;
      for (const host of ["::1", "[::1]"]) {
        const target = registryFor({
          email: {
            enabled: true,
            host,
            port: relayPort,
            from: "svc@example.org",
            home_channel: "ops@example.org",
          },
        }).get("email");
        await expect(target?.send(message("x"))).resolves.toMatchObject({ chatId: "ops@example.org" });
      }
      expect(delivered).toEqual(["mail", "mail"]);
    } finally {
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });
});

describe("email: secure: false against a server that expects TLS from the start (SMTPS)", () => {
  it("the greeting that never comes is named with the fix (secure: true)", async () => {
    const smtps = new SMTPServer({ secure: true, authOptional: true, logger: false });
    smtps.on("error", () => {});
    await new Promise<void>((resolve) => smtps.listen(0, "127.0.0.1", resolve));
    try {
      const target = registryFor({
        email: {
          enabled: true,
          host: "127.0.0.1",
          port: (smtps.server.address() as AddressInfo).port,
          secure: false,
          timeout_seconds: 0.5,
          from: "svc@example.org",
          home_channel: "ops@example.org",
        },
      }).get("email");
      const error = await target?.send(message("x")).catch((e: unknown) => e);
      expect((error as Error).message).toBe(
        "email: ETIMEDOUT — Greeting never received — a server that expects TLS from the start (SMTPS, usually port 465) greets no plain-text client: if this is one, set secure: true",
      );
    } finally {
      await new Promise<void>((resolve) => smtps.close(() => resolve()));
    }
  });
});
