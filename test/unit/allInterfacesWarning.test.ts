import { describe, expect, it } from "vitest";
import { allInterfacesWarning } from "../../src/gateway/webhookStartupWarnings.js";
import { listenAddress } from "../../src/io/http/listenHint.js";

/** The start's addresses are written as svc gateway status and svc config check write them. */
describe("an IPv6 host in the start's log lines", () => {
  it("the every-interface warning writes :: in brackets ([::]:8644, not :::8644)", () => {
    expect(allInterfacesWarning("::", 8644)).toContain("every network interface ([::]:8644):");
    expect(allInterfacesWarning("0.0.0.0", 8644)).toContain("every network interface (0.0.0.0:8644):");
  });

  it("a host already written in brackets is not bracketed twice", () => {
    expect(listenAddress("[::]", 8644)).toBe("[::]:8644");
    expect(allInterfacesWarning("[::]", 8644)).toContain("([::]:8644)");
    expect(listenAddress("::1", 8644)).toBe("[::1]:8644");
  });
});
