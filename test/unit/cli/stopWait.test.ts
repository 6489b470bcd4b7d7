import { afterEach, describe, expect, it } from "vitest";
import {
  defaultStopWaitSeconds,
  stopNotice,
  stopSignalAgain,
  stopWaitSeconds,
} from "../../../src/cli/gatewayLifecycle.js";
import { svcPaths } from "../../../src/config/paths.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

describe("svc gateway stop: how long it waits by default", () => {
  it("90 s for the default drain (30 s), never under 60 s", () => {
    expect(defaultStopWaitSeconds(30)).toBe(90);
    expect(defaultStopWaitSeconds(10)).toBe(60);
    expect(defaultStopWaitSeconds(0)).toBe(60);
  });

  it("outlasts a longer drain: twice drain_timeout_seconds (agent runs, then cron runs) plus 30 s", () => {
    expect(defaultStopWaitSeconds(100)).toBe(230);
    expect(defaultStopWaitSeconds(3600)).toBe(7230);
  });
});

describe("svc gateway stop: the drain of the gateway it stops, not of config.yaml as edited since", () => {
  let home: TempHome | undefined;
  afterEach(() => {
    home?.cleanup();
    home = undefined;
  });
  const recordGateway = (h: TempHome, drain?: number) =>
    h.write(
      "gateway.json",
      JSON.stringify({
        pid: 4242,
        host: "127.0.0.1",
        port: 8644,
        started_at: "2026-12-04T22:00:00.000Z",
        state_backend: "local",
        ...(drain === undefined ? {} : { drain_timeout_seconds: drain }),
      }),
    );

  it("a gateway draining for 600 s, config.yaml since edited to 10 s (not reloaded) or broken: waits 1230 s, not 60", () => {
    home = tempHome();
    recordGateway(home, 600);
    const paths = svcPaths(home.dir);
    home.write("config.yaml", "gateway:\n  drain_timeout_seconds: 10\n");
    expect(stopWaitSeconds(paths, 4242)).toBe(1230);
    home.write("config.yaml", "gateway: [unclosed\n");
    expect(stopWaitSeconds(paths, 4242)).toBe(1230);
  });

  it("config.yaml's drain for a gateway.json of another pid, or of an older svc that records none", () => {
    home = tempHome();
    home.write("config.yaml", "gateway:\n  drain_timeout_seconds: 100\n");
    const paths = svcPaths(home.dir);
    recordGateway(home, 600);
    expect(stopWaitSeconds(paths, 4343)).toBe(230);
    recordGateway(home);
    expect(stopWaitSeconds(paths, 4242)).toBe(230);
  });
});

describe("svc gateway stop: what it says it does", () => {
  it("local (and a config that no longer loads): pending coalesced events are dispatched", () => {
    for (const backend of ["local", undefined])
      expect(stopNotice(42, backend)).toBe(
        "Stopping the gateway (pid 42): pending coalesced events are dispatched and runs in flight finish, or are kept for the next start if still going after gateway.drain_timeout_seconds…\n",
      );
  });

  it("redis: groups stay in Redis and fire when their window closes, not at this stop; a run still going when the drain ends goes back to Redis for any instance, not to the next start", () => {
    expect(stopNotice(42, "redis")).toBe(
      "Stopping the gateway (pid 42): runs in flight finish, or go back to Redis for any instance to run if still going after gateway.drain_timeout_seconds; pending coalescing groups stay in Redis and fire when their window closes…\n",
    );
  });
});

describe("svc gateway stop: a config.yaml edited since the gateway started", () => {
  it("says what the running gateway does, and that config.yaml names another backend, which a restart would use", () => {
    expect(stopNotice(42, "redis", "local")).toBe(
      "Stopping the gateway (pid 42): runs in flight finish, or go back to Redis for any instance to run if still going after gateway.drain_timeout_seconds (config.yaml now names state.backend: local, which a restart would use); pending coalescing groups stay in Redis and fire when their window closes…\n",
    );
  });
});

describe("svc gateway run: a second stop signal while the runs drain", () => {
  it("says what becomes of a run still going when the drain ends: kept for the next start (local), back in Redis for any instance (redis)", () => {
    expect(stopSignalAgain("SIGINT", "local")).toBe(
      "[gateway] SIGINT received again: already stopping — runs still in flight get the rest of gateway.drain_timeout_seconds, then what has not finished is kept for the next start",
    );
    expect(stopSignalAgain("SIGTERM", "redis")).toBe(
      "[gateway] SIGTERM received again: already stopping — runs still in flight get the rest of gateway.drain_timeout_seconds, then what has not finished goes back to Redis for any instance to run",
    );
  });
});
