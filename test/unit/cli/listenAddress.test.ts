import { describe, expect, it } from "vitest";
import { listenAddress } from "../../../src/cli/gatewayLifecycle.js";
import { listenFailureHint } from "../../../src/io/http/listenHint.js";

describe("svc gateway status / start: the listening address", () => {
  it("is host:port, with an IPv6 host in brackets so the address can be used as written", () => {
    expect(listenAddress("127.0.0.1", 8644)).toBe("127.0.0.1:8644");
    expect(listenAddress("localhost", 8644)).toBe("localhost:8644");
    expect(listenAddress("::1", 8644)).toBe("[::1]:8644");
    expect(listenAddress("::", 8644)).toBe("[::]:8644");
  });
});

describe("svc gateway run: why the webhook listener could not take its port", () => {
  it("names the gateway's own --inspect relay when it holds the webhook port, not another gateway", () => {
    expect(listenFailureHint("127.0.0.1", 8090, 8090)).toBe(
      "the inspector (--inspect) already listens on port 8090 — choose another port for one of them: --inspect <port>, or platforms.webhook.port, WEBHOOK_PORT or --port",
    );
    for (const [port, inspectPort] of [
      [8644, 8090],
      [8644, undefined],
      [0, 0],
    ] as const)
      expect(listenFailureHint("127.0.0.1", port, inspectPort)).toMatch(/^is another gateway running\?/);
  });
});
