import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import {
  gatewayPerTest,
  inHome,
  RECORDER_AGENT,
  readRun,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { deliverSigned } from "../../helpers/http.js";

/**
 * A reload (SIGHUP) while runs accepted before it wait for a run slot: each runs with its route as it was
 * when its event was accepted — prompt rendered then, the route's toolsets then — also when the reload
 * removed the route; events accepted after the reload get the reloaded route.
 */

const SECRET = "accepted-runs-route-secret";

/** Holds each run until `<home>/release` exists, then hands its stdin to the recorder. */
const GATE_AGENT = `#!/usr/bin/env bash
home="$(dirname "$0")/.."
touch "$home/started-$SVC_DELIVERY_ID"
while [ ! -e "$home/release" ]; do sleep 0.02; done
exec bash "$(dirname "$0")/recorder.sh"
`;

const AGENT = {
  provider: "command",
  command: ["bash", inHome("agent/gate.sh")],
  max_concurrent_runs: 1,
};

/** Polls up to 10 s: starting an agent process takes its time on a loaded machine. */
const SLOW = { timeout: 10_000, interval: 20 };

const V1 = { secret: SECRET, prompt: "v1 PR {number}", toolsets: ["web_extract"] };

describe("runs accepted before a reload", () => {
  const gw = gatewayPerTest();

  const start = () =>
    gw.start({
      config: webhookConfig({ pr: V1 }, {}, { agent: AGENT }),
      files: { "agent/gate.sh": GATE_AGENT, "agent/recorder.sh": RECORDER_AGENT },
    });

  it("run with the route they were accepted for after a reload changed it; later events get the new route", async () => {
    const live = await start();
    const { port } = live.gateway;
    expect(await deliverSigned(port, "pr", "a1", SECRET, { number: 1 })).toMatchObject({ status: 202 });
    await vi.waitFor(() => expect(existsSync(join(live.home.dir, "started-a1"))).toBe(true), SLOW);
    expect(await deliverSigned(port, "pr", "a2", SECRET, { number: 2 })).toMatchObject({ status: 202 });

    const v2 = { secret: SECRET, prompt: "v2 PR {number}", toolsets: ["web_search"] };
    live.home.write("config.yaml", stringify(webhookConfig({ pr: v2 }, {}, { agent: AGENT })), 0o600);
    live.gateway.reload();
    expect(await deliverSigned(port, "pr", "a3", SECRET, { number: 3 })).toMatchObject({ status: 202 });
    live.home.write("release", "");

    const waited = await waitForRun(live, "a2");
    expect(waited).toMatchObject({ prompt: "v1 PR 2", route: "pr", toolsets: "web_extract" });
    expect(await waitForRun(live, "a3")).toMatchObject({ prompt: "v2 PR 3", toolsets: "web_search" });
    expect(readRun(live.home, "a1")).toMatchObject({ prompt: "v1 PR 1", toolsets: "web_extract" });
  });

  it("still run, once each, after a reload removed their route, which then answers 404", async () => {
    const live = await start();
    const { port } = live.gateway;
    expect(await deliverSigned(port, "pr", "b1", SECRET, { number: 1 })).toMatchObject({ status: 202 });
    await vi.waitFor(() => expect(existsSync(join(live.home.dir, "started-b1"))).toBe(true), SLOW);
    expect(await deliverSigned(port, "pr", "b2", SECRET, { number: 2 })).toMatchObject({ status: 202 });

    const other = { secret: SECRET, prompt: "other {number}" };
    live.home.write("config.yaml", stringify(webhookConfig({ other }, {}, { agent: AGENT })), 0o600);
    live.gateway.reload();
    expect(await deliverSigned(port, "pr", "b3", SECRET, { number: 3 })).toMatchObject({ status: 404 });
    live.home.write("release", "");

    expect(await waitForRun(live, "b1")).toMatchObject({ prompt: "v1 PR 1", route: "pr" });
    expect(await waitForRun(live, "b2")).toMatchObject({ prompt: "v1 PR 2", route: "pr" });
    await vi.waitFor(
      () => expect(live.logs().filter((l) => l.msg.startsWith("[webhook] pr reply"))).toHaveLength(2),
      SLOW,
    );
    expect(readRun(live.home, "b3")).toBeUndefined();
  });
});
