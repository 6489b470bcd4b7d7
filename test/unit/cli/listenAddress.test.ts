import { describe, expect, it } from "vitest";
import { listenAddress } from "../../../src/cli/gatewayLifecycle.js";
import { listenFailureHint, type PortHolder } from "../../../src/io/http/listenHint.js";

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
    expect(listenFailureHint("127.0.0.1", { port: 8090, inspectPort: 8090 })).toBe(
      "the inspector (--inspect) already listens on port 8090 — choose another port for one of them: --inspect <port>, or platforms.webhook.port, WEBHOOK_PORT or --port",
    );
    for (const [port, inspectPort] of [
      [8644, 8090],
      [8644, undefined],
    ] as const)
      expect(listenFailureHint("127.0.0.1", { port, inspectPort })).toMatch(
        new RegExp(`^port ${port} is already in use — find what holds it with `),
      );
    expect(listenFailureHint("127.0.0.1", { port: 0, inspectPort: 0 })).toBe(
      "the address is in use — choose another port (platforms.webhook.port, WEBHOOK_PORT or --port)",
    );
  });

  it("says a busy port by what holds it, and blames no gateway when it cannot tell", () => {
    const hint = (holder?: PortHolder) =>
      listenFailureHint("0.0.0.0", { port: 8644, code: "EADDRINUSE", holder });
    expect(
      hint({ kind: "this_home", home: "/srv/svc", pidFile: "/srv/svc/gateway.pid", pid: 4121, named: true }),
    ).toBe(
      "the gateway of this SVC_HOME (/srv/svc, pid 4121) already listens on port 8644 — stop it with svc gateway stop",
    );
    expect(
      hint({ kind: "this_home", home: "/srv/svc", pidFile: "/srv/svc/gateway.pid", pid: 4121, named: false }),
    ).toBe(
      "the gateway of this SVC_HOME (/srv/svc, pid 4121) already listens on port 8644 — stop it with kill 4121 (/srv/svc/gateway.pid does not name it, so svc gateway stop would not find it)",
    );
    expect(hint({ kind: "svc" })).toMatch(/^another svc gateway listens on port 8644 \(.*\) — stop that one/);
    expect(hint({ kind: "other" })).toMatch(/^another program listens on port 8644 \(not an svc gateway/);
    for (const holder of [{ kind: "other" } as const, undefined])
      expect(hint(holder)).toContain(
        process.platform === "linux" ? "ss -ltnp 'sport = :8644'" : "lsof -nP -iTCP:8644 -sTCP:LISTEN",
      );
    expect(hint()).not.toContain("gateway");
  });
});
