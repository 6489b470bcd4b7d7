import { describe, expect, it } from "vitest";
import { configSchema } from "../../../src/config/schema.js";
import { smtpOptions } from "../../../src/io/targets/email.js";

/** `platforms.email` as the real schema parses it. */
const email = (settings: Record<string, unknown>) =>
  configSchema.parse({
    platforms: { email: { enabled: true, host: "smtp.example.org", from: "a@b", ...settings } },
  }).platforms.email as Parameters<typeof smtpOptions>[0];

describe("SMTP connection options", () => {
  it("port 465 (SMTPS) uses implicit TLS unless secure says otherwise", () => {
    expect(smtpOptions(email({ port: 465 })).secure).toBe(true);
    expect(smtpOptions(email({ port: 465, secure: false })).secure).toBe(false);
  });

  it("port 587 (the default) and 25 start plain and upgrade with STARTTLS; secure: true forces TLS", () => {
    expect(smtpOptions(email({})).port).toBe(587);
    expect(smtpOptions(email({})).secure).toBe(false);
    expect(smtpOptions(email({ port: 25 })).secure).toBe(false);
    expect(smtpOptions(email({ port: 2465, secure: true })).secure).toBe(true);
  });

  it("with a login, STARTTLS is required on a plain connection to another machine, not on loopback or implicit TLS", () => {
    const login = { user: "svc", password: "SMTP-PASSWORD-VALUE" };
    expect(smtpOptions(email({ ...login })).requireTLS).toBe(true);
    expect(smtpOptions(email({ ...login, port: 25, host: "192.0.2.7" })).requireTLS).toBe(true);
    for (const host of ["localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]"]) {
      expect(smtpOptions(email({ ...login, host })).requireTLS).toBeUndefined();
    }
    expect(smtpOptions(email({ ...login, port: 465 })).requireTLS).toBeUndefined();
    expect(smtpOptions(email({})).requireTLS).toBeUndefined();
  });

  it("a timeout_seconds at the longest a timer holds (2147483 s, what a longer one counts as) keeps every timeout within it: no TimeoutOverflowWarning", () => {
    const TIMER_MAX_MS = 2 ** 31 - 1;
    for (const timeout_seconds of [2147483, 99999999]) {
      const options = smtpOptions(email({ timeout_seconds }));
      for (const ms of [options.connectionTimeout, options.greetingTimeout, options.socketTimeout])
        expect(ms).toBeLessThanOrEqual(TIMER_MAX_MS);
    }
    // Below it the socket's stays a second past the greeting's (a silent server is named by its greeting).
    expect(smtpOptions(email({ timeout_seconds: 15 })).socketTimeout).toBe(16000);
  });
});
