import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * platforms.email.host written as a connection URL (smtp://user:password@host:587, as many programs take
 * their mail server) passed the load and svc config check; every connect then failed with the resolver's
 * `getaddrinfo ENOTFOUND smtp://user:<password>@host:587`, which went into the credentials check's WARN and
 * every delivery's ERROR lines, password included.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

function load(host: string): unknown {
  home = tempHome();
  home.write(
    "config.yaml",
    `platforms:\n  email: {enabled: true, host: '${host}', from: a@b.c, user: bob, password: x}\n`,
  );
  try {
    return loadConfig({ home: home.dir, env: {} });
  } catch (err) {
    return err;
  }
}

describe("platforms.email.host", () => {
  it("a URL or user@ in it is refused at load, naming the key and the fix, never the password", () => {
    for (const host of ["smtp://bob:smtp-pw-1@smtp.example.com:587", "bob:smtp-pw-1@smtp.example.com"]) {
      const error = load(host);
      expect(error).toBeInstanceOf(Error);
      const message = (error as Error).message;
      expect(message).toContain(
        "config.yaml: platforms.email.host: is a URL or holds a user name or password (smtp://user:password@host) — write the SMTP server's host name alone (host: smtp.example.com) and put the rest in port, secure, user and password",
      );
      expect(message).not.toContain("smtp-pw-1");
    }
  });

  it("a host name or address loads, an IPv6 address also in brackets as URLs write it", () => {
    for (const host of ["smtp.example.com", "127.0.0.1", "::1", "[::1]", "[2001:db8::25]"])
      expect(load(host)).not.toBeInstanceOf(Error);
  });

  it("a host with a port (smtp.example.com:587), which no resolver finds, is refused at load, naming the key for the port", () => {
    for (const [host, named] of [
      ["smtp.example.com:587", "smtp.example.com"],
      ["[::1]:25", "::1"],
    ] as const) {
      const error = load(host);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain(
        `config.yaml: platforms.email.host: "${host}" includes a port — write ${named} and put the port in platforms.email.port`,
      );
    }
  });
});
