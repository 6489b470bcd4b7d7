import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { inHome, startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** Says it started, then waits for `gate` before it replies. */
const GATED_AGENT = `cat >/dev/null
home="$(dirname "$0")/.."
touch "$home/started"
while [ ! -e "$home/gate" ]; do sleep 0.02; done
printf done
`;

describe("a named profile's directory removed while one of its cron jobs runs", () => {
  it("stays removed: neither the run's last_run nor the profile's MCP status is written into it anew", async () => {
    // Seen: profiles/work/ came back once the run ended, holding a cron/jobs.json with no job, and at the
    // stop a mcp-cache/status.json (no MCP server is even configured).
    gw = await startTestGateway({
      files: {
        "agent/gated.sh": GATED_AGENT,
        "profiles/work/cron/jobs.json": oneJobStore({
          name: "nightly",
          prompt: "hi",
          next_run: "2026-01-01T00:00:00.000Z",
        }),
      },
      config: {
        agent: { provider: "command", command: ["bash", inHome("agent/gated.sh")] },
        platforms: { webhook: { enabled: false } },
      },
    });
    const g = gw;
    await vi.waitFor(() => expect(existsSync(join(g.home.dir, "started"))).toBe(true), {
      timeout: 10_000,
      interval: 20,
    });
    rmSync(join(g.home.dir, "profiles/work"), { recursive: true });
    g.home.write("gate", "");
    await vi.waitFor(
      () => expect(g.logs().some((l) => l.msg.includes("nightly in profile work: run finished"))).toBe(true),
      { timeout: 10_000, interval: 20 },
    );
    await g.gateway.stop(); // the stop writes what the run left (its last_run) too
    expect(existsSync(join(g.home.dir, "profiles/work"))).toBe(false);
  });
});
