import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

let home: TempHome;
let gateway: Foreground | undefined;

/** A server that ignores SIGTERM and holds its process group after its stdin closes: it stops at SIGKILL. */
function writeConfig(routes: Record<string, unknown>): void {
  home.write(
    "config.yaml",
    stringify(
      cliConfig(routes, {
        gateway: { multiplex_profiles: true },
        agent: { provider: "command", command: ["cat"] },
        mcp_servers: {
          slow: {
            command: "bash",
            args: [
              "-c",
              `trap '' TERM; ${JSON.stringify(process.execPath)} ${JSON.stringify(STDIO_FIXTURE)}; sleep 20`,
            ],
          },
        },
      }),
    ),
    0o600,
  );
}

const workStatus = () => {
  try {
    return JSON.parse(
      readFileSync(join(home.dir, "profiles", "work", "mcp-cache", "status.json"), "utf8"),
    ) as {
      servers: Array<{ name: string; state: string }>;
      closing?: string;
    };
  } catch {
    return undefined;
  }
};

beforeAll(async () => {
  home = tempHome();
  writeConfig({ team: { secret: "INSECURE_NO_AUTH", profile: "work", deliver: "log" } });
  gateway = await runForeground(home);
  expect((await postJson(`http://127.0.0.1:${gateway.port}/p/work/webhooks/team`, {})).status).toBe(202);
  await waitFor(() => workStatus()?.servers[0]?.state === "connected", "profile work's connection");
}, 60_000);
afterAll(async () => {
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
});

/**
 * docs/mcp.md, Named profiles: a profile whose connections an earlier reload is still closing (its server slow
 * to stop) is reloaded no more, and a second `svc mcp reload` neither waits for it nor fails for it.
 */
it("a second svc mcp reload while a profile's connections close prints the default profile's summary alone, exit 0", async () => {
  const pid = (gateway as Foreground).child.pid;
  writeConfig({ mine: { secret: "INSECURE_NO_AUTH", deliver: "log" } });
  const first = svc(home, ["mcp", "reload"]);
  await waitFor(() => workStatus()?.closing !== undefined, "profile work's close to begin");
  const second = await svc(home, ["mcp", "reload", "--wait", "2"]);
  expect(second.stdout).toBe(
    `Gateway (pid ${pid}) reloaded mcp_servers:\n  unchanged: slow\n  nothing changed\n`,
  );
  expect(second.code).toBe(0);
  const closed = await first;
  expect(closed.stdout).toContain(
    "Profile work: its connections are closed — no route, subscription or cron job is bound to it any more",
  );
  expect(closed.code).toBe(0);
  expect(workStatus()?.closing).toBeUndefined();
}, 60_000);
