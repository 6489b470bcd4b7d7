import { describe, expect, it } from "vitest";
import { listenAddress } from "../../../src/cli/gatewayLifecycle.js";

describe("svc gateway status / start: the listening address", () => {
  it("is host:port, with an IPv6 host in brackets so the address can be used as written", () => {
    expect(listenAddress("127.0.0.1", 8644)).toBe("127.0.0.1:8644");
    expect(listenAddress("localhost", 8644)).toBe("localhost:8644");
    expect(listenAddress("::1", 8644)).toBe("[::1]:8644");
    expect(listenAddress("::", 8644)).toBe("[::]:8644");
  });
});
