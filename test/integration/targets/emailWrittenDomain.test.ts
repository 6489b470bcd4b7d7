import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import { message, registryFor, sendError } from "./support.js";

/**
 * A route that writes the domain of its recipient (`to: "{user.login}@example.com"`) sends only there: a
 * login from the payload that makes the text another address to nodemailer (`attacker@evil.org (`, which
 * leaves `@example.com` a comment, `x <attacker@evil.org>`, or `a@evil.org` before the route's `@`) is
 * refused, nothing sent. A recipient the route leaves to the event entirely (`{user.email}`, `{name} <{email}>`)
 * is the event's to choose, as before.
 */
const rcpts: string[][] = [];
let server: FakeSmtp;
let port: number;
beforeAll(async () => {
  server = await startFakeSmtp({ received: rcpts });
  port = server.port;
});
afterAll(() => server.close());

const email = () =>
  registryFor({ email: { enabled: true, host: "127.0.0.1", port, secure: false, from: "svc@example.org" } });
const routed = (written: string, rendered: string) =>
  message("Build 5 failed", { to: rendered }, { written: { to: written } });

describe("email: a domain the route writes is kept", () => {
  it("a login that turns the text into another address is refused, nothing sent", async () => {
    rcpts.length = 0;
    const registry = email();
    for (const login of [
      "attacker@evil.org (",
      "x <attacker@evil.org>",
      "a@evil.org",
      "attacker@evil.org <",
    ]) {
      const error = (await sendError(
        registry,
        "email",
        routed("{user.login}@example.com", `${login}@example.com`),
      )) as Error;
      expect(error.message).toBe(
        `email: route "alerts": deliver_extra.to "${login}@example.com" is not an address at @example.com, which the route writes — the payload filled in text that changes the address; nothing sent`,
      );
    }
    expect(rcpts).toEqual([]);
  });

  it("a domain the route writes in part (ops@{team}.example.com) keeps its shape: a team that makes another address is refused", async () => {
    rcpts.length = 0;
    const registry = email();
    for (const team of ["evil.org (", "x <attacker@evil.org>", "sre.example.com.evil.org ("]) {
      const rendered = `ops@${team}.example.com`;
      const error = (await sendError(registry, "email", routed("ops@{team}.example.com", rendered))) as Error;
      expect(error.message).toBe(
        `email: route "alerts": deliver_extra.to ${JSON.stringify(rendered)} is not an address at @{team}.example.com, which the route writes — the payload filled in text that changes the address; nothing sent`,
      );
    }
    expect(rcpts).toEqual([]);
    await registry.get("email")?.send(routed("ops@{team}.example.com", "ops@sre.example.com"));
    expect(rcpts).toEqual([["ops@sre.example.com"]]);
  });

  it("a plain login is sent to the route's domain; a recipient the event fills entirely is its own", async () => {
    rcpts.length = 0;
    const registry = email();
    await registry.get("email")?.send(routed("{user.login}@example.com", "jane.doe@example.com"));
    await registry.get("email")?.send(routed("{name} <{email}>", "Jane <jane@elsewhere.org>"));
    await registry.get("email")?.send(routed("{user.email}", "bob@elsewhere.org"));
    expect(rcpts).toEqual([["jane.doe@example.com"], ["jane@elsewhere.org"], ["bob@elsewhere.org"]]);
  });
});
