import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { GATED_AGENT, gatewayPerTest, inHome, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "./svc.js";

const gateways = gatewayPerTest();

const NOT_ENDED = "Note: the run of slow-1 has not ended";

describe("svc webhook redeliver of an event whose run has not ended", { timeout: 90_000 }, () => {
  it("says on stderr that the original's run goes on and the redelivery starts a second one; once it ended, says nothing", async () => {
    const gw = await gateways.start({
      files: { "agent/gated.sh": GATED_AGENT },
      config: webhookConfig(
        { slow: { secret: "INSECURE_NO_AUTH" } },
        {},
        { agent: { provider: "command", command: ["bash", inHome("agent/gated.sh")] } },
      ),
    });
    const { home } = gw;
    const port = String(gw.gateway.port);
    expect((await postJson(gw.url("/webhooks/slow"), { n: 1 }, { "x-request-id": "slow-1" })).status).toBe(
      202,
    );
    await vi.waitFor(
      () => expect(readFileSync(join(home.dir, "deliveries", "history.jsonl"), "utf8")).toContain('"slow-1"'),
      { timeout: 10_000, interval: 50 },
    );
    const early = await svc(home, ["webhook", "redeliver", "slow-1", "--port", port]);
    expect(early.code).toBe(0);
    expect(early.stderr).toContain(
      `${NOT_ENDED} (svc webhook deliveries shows no run for it yet: it waits in the run queue, is saved for the gateway's next start, or is running) — this redelivery starts a second run of the same event`,
    );
    home.write("release", "");
    await vi.waitFor(
      () =>
        expect(
          readFileSync(join(home.dir, "deliveries", "history.jsonl"), "utf8")
            .split("\n")
            .filter((line) => line.includes('"kind":"run"') && line.includes('"slow-1"')),
        ).toHaveLength(1),
      { timeout: 10_000, interval: 50 },
    );
    const late = await svc(home, ["webhook", "redeliver", "slow-1", "--port", port]);
    expect(late.code).toBe(0);
    expect(late.stderr).not.toContain(NOT_ENDED);
  });
});
