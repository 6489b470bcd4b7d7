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
});
