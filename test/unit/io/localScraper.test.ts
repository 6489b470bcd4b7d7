import { describe, expect, it } from "vitest";
import { fromLocalScraper } from "../../../src/io/http/localScraper.js";

describe("fromLocalScraper (who is served GET /metrics with platforms.webhook.metrics unset)", () => {
  it("takes every spelling of a loopback Host: IPv6 written in full or in capitals, names in any case", () => {
    for (const host of [
      "localhost",
      "LOCALHOST:9090",
      // The name written absolute (a trailing dot), as some clients and `curl http://localhost.:8644/` send it.
      "localhost.",
      "localhost.:8644",
      "127.0.0.1:8644",
      "[::1]:8644",
      "[0:0:0:0:0:0:0:1]",
      "[0:0:0:0:0:0:0:1]:8644",
      "[::FFFF:127.0.0.1]",
      "[::ffff:7f00:1]:8644",
    ])
      expect(fromLocalScraper({ host }), host).toBe(true);
  });

  it("refuses a Host that names another machine, and a browser's or a proxy's request", () => {
    for (const host of [
      "example.com",
      "example.com.",
      "localhost..",
      "[::2]",
      "[fe80::1]:8644",
      "10.0.0.1:8644",
      "[::ffff:10.0.0.1]",
    ])
      expect(fromLocalScraper({ host }), host).toBe(false);
    expect(fromLocalScraper({ host: "localhost", origin: "https://example.com" })).toBe(false);
    expect(fromLocalScraper({ host: "localhost", "x-forwarded-for": "10.0.0.1" })).toBe(false);
  });

  it("judges by the host a request target in absolute form names, not by Host", () => {
    expect(fromLocalScraper({ host: "localhost" }, "attacker.example")).toBe(false);
    expect(fromLocalScraper({ host: "attacker.example" }, "localhost:8644")).toBe(true);
  });
});
