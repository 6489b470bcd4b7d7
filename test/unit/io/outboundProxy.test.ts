import { describe, expect, it } from "vitest";
import { ProxySettingError, proxyFor, proxyNotice } from "../../../src/io/outbound/proxyChoice.js";

const via = (url: string, env: Record<string, string>) => {
  const choice = proxyFor(new URL(url), env);
  return choice === undefined ? "direct" : `${choice.shown} ${choice.variable}`;
};

describe("proxyFor: curl's variables", () => {
  it("HTTPS_PROXY for https URLs, HTTP_PROXY for http URLs, ALL_PROXY when the scheme's own is unset", () => {
    const env = { HTTPS_PROXY: "http://secure:3128", HTTP_PROXY: "http://plain:3128" };
    expect(via("https://api.example.com/v1", env)).toBe("http://secure:3128 HTTPS_PROXY");
    expect(via("http://api.example.com/v1", env)).toBe("http://plain:3128 HTTP_PROXY");
    expect(via("http://api.example.com/", { HTTPS_PROXY: "http://secure:3128" })).toBe("direct");
    const all = { ALL_PROXY: "http://all:8080", HTTPS_PROXY: "http://secure:3128" };
    expect(via("https://a.example", all)).toBe("http://secure:3128 HTTPS_PROXY");
    expect(via("http://a.example", all)).toBe("http://all:8080 ALL_PROXY");
  });

  it("the lower-case variable wins when both are set; an empty one counts as unset", () => {
    expect(via("https://a.example", { https_proxy: "http://low:1", HTTPS_PROXY: "http://up:2" })).toBe(
      "http://low:1 https_proxy",
    );
    expect(via("https://a.example", { https_proxy: "", HTTPS_PROXY: "http://up:2" })).toBe(
      "http://up:2 HTTPS_PROXY",
    );
    expect(via("https://a.example", { https_proxy: "http://p:1", no_proxy: "", NO_PROXY: "a.example" })).toBe(
      "direct",
    );
  });

  it("a proxy written without a scheme is http://; its credentials are never shown", () => {
    const choice = proxyFor(new URL("https://a.example"), { HTTPS_PROXY: "user:pa%40ss@proxy.corp:3128" });
    expect(choice?.shown).toBe("http://proxy.corp:3128");
    expect(choice?.url.username).toBe("user");
    expect(proxyFor(new URL("https://a.example"), { HTTPS_PROXY: "proxy.corp" })?.shown).toBe(
      "http://proxy.corp",
    );
  });

  it("a proxy scheme other than http and https is refused, naming the variable", () => {
    expect(() => proxyFor(new URL("https://a.example"), { HTTPS_PROXY: "socks5://u:secret@p:1080" })).toThrow(
      new ProxySettingError(
        "HTTPS_PROXY: svc reaches a proxy over http:// or https:// only, not socks5:// (socks5://p:1080)",
      ),
    );
  });
});

describe("proxyFor: credentials", () => {
  it("a user or password with a % that starts no %XX is refused naming the variable, never the value", () => {
    const refused = () => proxyFor(new URL("https://a.example"), { HTTPS_PROXY: "http://svc:50%off@p:3128" });
    expect(refused).toThrow(
      new ProxySettingError(
        "HTTPS_PROXY: the user or password of http://p:3128 holds a % that starts no %XX — write them percent-encoded (%25 for %, %40 for @)",
      ),
    );
    expect(proxyFor(new URL("https://a.example"), { HTTPS_PROXY: "http://svc:50%25off@p:3128" })?.shown).toBe(
      "http://p:3128",
    );
  });
});

describe("proxyFor: NO_PROXY and loopback", () => {
  const proxied = (url: string, noProxy: string) =>
    via(url, { HTTPS_PROXY: "http://p:1", HTTP_PROXY: "http://p:1", NO_PROXY: noProxy }) !== "direct";

  it("a host and its subdomains, written with or without a leading dot or *.", () => {
    for (const entry of ["example.com", ".example.com", "*.example.com"]) {
      expect(proxied("https://example.com/", entry)).toBe(false);
      expect(proxied("https://api.example.com/", entry)).toBe(false);
      expect(proxied("https://notexample.com/", entry)).toBe(true);
    }
  });

  it("*, several entries (commas and spaces), host:port, IP addresses and CIDR ranges", () => {
    expect(proxied("https://anything.example", "*")).toBe(false);
    expect(proxied("https://b.example", "a.example, b.example")).toBe(false);
    expect(proxied("https://b.example", "a.example b.example")).toBe(false);
    expect(proxied("https://a.example:8443/", "a.example:8443")).toBe(false);
    expect(proxied("https://a.example/", "a.example:8443")).toBe(true);
    expect(proxied("https://a.example/", "a.example:443")).toBe(false);
    expect(proxied("http://10.1.2.3/", "10.1.2.3")).toBe(false);
    expect(proxied("http://10.1.2.3/", "10.0.0.0/8")).toBe(false);
    expect(proxied("http://11.1.2.3/", "10.0.0.0/8")).toBe(true);
    expect(proxied("http://[fd00::5]/", "fd00::/8")).toBe(false);
    expect(proxied("http://[fd00::5]:8080/", "[fd00::5]:8080")).toBe(false);
    // An IP address is not a domain: 3.4 names no subnet of 1.2.3.4.
    expect(proxied("http://1.2.3.4/", "3.4")).toBe(true);
    expect(proxied("HTTPS://API.Example.COM/", "example.com")).toBe(false);
  });

  it("an IPv6 address in NO_PROXY matches however either side writes it (full, short, IPv4-mapped)", () => {
    expect(proxied("http://[2001:db8::5]/", "2001:db8:0:0:0:0:0:5")).toBe(false);
    expect(proxied("http://[2001:db8::5]/", "[2001:DB8::5]")).toBe(false);
    expect(proxied("http://[2001:db8::6]/", "2001:db8::5")).toBe(true);
    expect(proxied("http://[2001:db8::5]:8080/", "[2001:db8:0::5]:8080")).toBe(false);
    expect(proxied("http://[::ffff:10.1.2.3]/", "10.1.2.3")).toBe(false);
    expect(proxied("http://10.1.2.3/", "::ffff:10.1.2.3")).toBe(false);
  });

  it("loopback hosts never go to a proxy, whatever NO_PROXY says", () => {
    for (const url of [
      "http://localhost:8080/",
      "http://app.localhost/",
      "http://127.0.0.1:9/",
      "http://127.8.9.10/",
      "http://[::1]:3000/",
      "http://[0:0:0:0:0:0:0:1]/",
      "http://[::ffff:127.0.0.1]:3000/",
    ])
      expect(proxied(url, "")).toBe(false);
    expect(proxied("http://128.0.0.1/", "")).toBe(true);
  });
});

describe("proxyNotice", () => {
  it("names each proxy without its credentials, and NO_PROXY as set", () => {
    expect(
      proxyNotice({ HTTPS_PROXY: "http://user:hunter2@proxy.corp:3128", no_proxy: ".corp.example" }),
    ).toEqual({
      level: "info",
      text: "outbound requests use a proxy: https URLs through http://proxy.corp:3128 (HTTPS_PROXY); loopback hosts and no_proxy=.corp.example go direct",
    });
    expect(proxyNotice({})).toBeUndefined();
    expect(proxyNotice({ HTTP_PROXY: "ftp://user:hunter2@p:2121" })).toEqual({
      level: "error",
      text: "outbound proxy: HTTP_PROXY: svc reaches a proxy over http:// or https:// only, not ftp:// (ftp://p:2121)",
    });
  });
});
