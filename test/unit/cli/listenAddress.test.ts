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
    expect(
      hint({
        kind: "this_home_unseen",
        home: "/srv/svc",
        stateFile: "/srv/svc/gateway.json",
        pid: 1,
        namespace: "pid:[4026532201]",
      }),
    ).toBe(
      "the gateway of this SVC_HOME (/srv/svc) already listens on port 8644 (its GET /health names the instance /srv/svc/gateway.json records), as pid 1 of another PID namespace (pid:[4026532201]), which this process cannot signal — stop it where it runs (svc gateway stop there: docker exec <container> svc gateway stop, or on the host), or choose another port (platforms.webhook.port, WEBHOOK_PORT or --port)",
    );
    expect(
      hint({ kind: "this_home_unseen", home: "/srv/svc", stateFile: "/srv/svc/gateway.json", pid: 4121 }),
    ).toContain(
      "(its GET /health names the instance /srv/svc/gateway.json records), as pid 4121, a gateway this process cannot see (another PID namespace's, or another user's) — stop it where it runs",
    );
    expect(hint({ kind: "svc" })).toMatch(/^another svc gateway listens on port 8644 \(.*\) — stop that one/);
    // svc's body without Svc-Instance: no svc gateway stop, which cannot stop a program that only answers as one.
    expect(hint({ kind: "svc_unnamed" })).toMatch(
      /^an svc gateway older than this version, or another program answering as one, listens on port 8644 \(.*without the Svc-Instance header.*\) — find it with /,
    );
    expect(hint({ kind: "svc_unnamed" })).not.toContain("svc gateway stop");
    expect(hint({ kind: "other" })).toMatch(/^another program listens on port 8644 \(not an svc gateway/);
    for (const holder of [{ kind: "other" } as const, { kind: "svc_unnamed" } as const, undefined])
      expect(hint(holder)).toContain(
        process.platform === "linux" ? "ss -ltnp 'sport = :8644'" : "lsof -nP -iTCP:8644 -sTCP:LISTEN",
      );
    expect(hint()).not.toContain("gateway");
  });
});
