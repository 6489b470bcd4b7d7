import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  await killIfRunning(gateway);
  home?.cleanup();
});

/**
 * svc mcp reload waited out --wait and printed `retried (was not connected): loop (still connecting), hang3
 * (still connecting)` of a real SDK stdio server that exits 0.7 s after each handshake and one that never
 * answers, retried together: it waited for both to be out of connecting at one read of the status file,
 * which a crash-looping server is a moment only at each retry. The gateway reports how each retry first
 * ended, and the command prints that once both have: loop connected, hang3 failed with why.
 */
describe("svc mcp reload retrying a crash-looping server beside a hung one", { timeout: 90_000 }, () => {
  it("prints how each retry first ended, the loop's connect and the other's timeout", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(
        cliConfig(
          {},
          {
            mcp_servers: {
              loop: { command: process.execPath, args: [STDIO_FIXTURE, "legacy", "--crash-after-ms", "700"] },
              hang3: {
                command: process.execPath,
                args: ["-e", "process.stdin.resume()"],
                connect_timeout: 3,
              },
            },
          },
        ),
      ),
      0o600,
    );
    gateway = await runForeground(home, ["--port", "0"], { SVC_LOG_LEVEL: "debug" });
    const live = gateway;
    // loop's backoff has grown to 8 s (its fourth crash), and hang3 waits out a backoff of its own.
    await waitFor(
      () => live.stdout().includes("[mcp] loop: connected again after 3 failures"),
      "loop's third retry",
    );
    await waitFor(() => {
      const servers = readStatusFile(join(home?.dir ?? "", "mcp-cache"))?.servers ?? [];
      const state = (name: string) => servers.find((s) => s.name === name)?.state;
      return state("loop") === "reconnecting" && state("hang3") === "failed";
    }, "loop crashed again and hang3 failed");

    const result = await svc(home, ["mcp", "reload", "--wait", "10"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("  retried (was not connected): loop\n");
    expect(result.stdout).toMatch(
      /\n {2}failed to connect: hang3 \(retried\) — mcp_servers\.hang3: connect timed out after 3 s \(connect_timeout\)/,
    );
    expect(result.stdout).not.toContain("still connecting");
  });
});
