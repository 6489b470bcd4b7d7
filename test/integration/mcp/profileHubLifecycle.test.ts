import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import {
  gatewayPerTest,
  RECORDER_AGENT,
  recorderAgent,
  waitForRun,
  webhookConfig,
} from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { alive, pidInFile } from "../../helpers/process.js";

/**
 * A named profile's MCP connections (docs/mcp-oauth.md, Tokens): opened at the first run of a route bound
 * to it, and closed by the reload after which nothing is bound to that profile any more.
 */

const perTest = gatewayPerTest();
const SECRET = "lifecycle-secret";
const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));
// Writes its pid where the profile's .env says, then becomes the fixture server.
const WRAPPER = `#!/usr/bin/env bash\necho $$ > "$PID_FILE"\nexec node ${JSON.stringify(SERVER)}\n`;

function config(routes: Record<string, unknown>) {
  return webhookConfig(
    routes,
    { secret: SECRET, rate_limit: 1000 },
    {
      gateway: { multiplex_profiles: true },
      agent: recorderAgent(),
      mcp_servers: {
        fx: { command: "bash", args: ["${SVC_HOME}/mcp/wrapper.sh"], env: { PID_FILE: "${PID_FILE}" } },
      },
    },
  );
}

describe("a named profile's MCP connections", () => {
  it("open at its first run and close on the reload that leaves no route bound to the profile", async () => {
    const gw = await perTest.start({
      files: {
        "agent/recorder.sh": RECORDER_AGENT,
        "mcp/wrapper.sh": WRAPPER,
        ".env": "PID_FILE=/dev/null\n",
      },
      config: config({ keep: { prompt: "k" }, team: { prompt: "t", profile: "work" } }),
    });
    const pidFile = join(gw.home.dir, "work.pid");
    gw.home.write("profiles/work/.env", `PID_FILE=${pidFile}\n`, 0o600);
    expect(existsSync(pidFile)).toBe(false);
    const run = async (n: number) => {
      const body = JSON.stringify({ n });
      const res = await postJson(gw.url("/p/work/webhooks/team"), body, {
        "X-Hub-Signature-256": await sign(SECRET, body),
      });
      expect(res.status).toBe(202);
      await waitForRun(gw, res.body.delivery_id as string);
    };
    const started = () => pidInFile(pidFile);
    const reload = (routes: Record<string, unknown>) => {
      gw.home.write("config.yaml", stringify(config(routes)), 0o600);
      gw.gateway.reload();
    };
    await run(1);
    const pid = await started();
    expect(alive(pid)).toBe(true);

    // A reload that keeps a route of the profile keeps its connection: the next run spawns nothing new.
    reload({ team: { prompt: "t2", profile: "work" } });
    await run(2);
    expect(await started()).toBe(pid);
    expect(alive(pid)).toBe(true);

    // The reload after which no route is bound to work closes its connections (the server process ends).
    reload({ keep: { prompt: "k" } });
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 10_000 });
    expect(
      gw.logs().some((l) => l.profile === "work" && l.msg.includes("its MCP connections are closed")),
    ).toBe(true);

    // Bound again, its next run opens them again.
    rmSync(pidFile);
    reload({ team: { prompt: "t3", profile: "work" } });
    await run(3);
    const again = await started();
    expect(again).not.toBe(pid);
    expect(alive(again)).toBe(true);

    // Unbound and bound again at once, while its servers still close: the next run gets them back.
    const closed = () =>
      gw.logs().filter((l) => l.profile === "work" && l.msg.includes("its MCP connections are closed"))
        .length;
    reload({ keep: { prompt: "k" } });
    await vi.waitFor(() => expect(closed()).toBe(2), { timeout: 10_000 });
    rmSync(pidFile);
    reload({ team: { prompt: "t4", profile: "work" } });
    await run(4);
    const third = await started();
    await vi.waitFor(() => expect(alive(again)).toBe(false), { timeout: 10_000 });
    expect(third).not.toBe(again);
    expect(alive(third)).toBe(true);
  }, 30_000);
});
