import type { ChildProcess } from "node:child_process";
import { mkdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc, waitFor } from "./svc.js";

/**
 * A directory where the gateway's MCP status file goes: `svc mcp reload` waited its 10 s for a report that
 * could never come and said the gateway might be stuck, `svc mcp list` advised the reload, which cannot write
 * the file either, and the gateway's warning gave the bare EISDIR of its write, with nothing to do about it.
 */

let home: TempHome;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  home.cleanup();
});

describe("a directory in mcp-cache/status.json's place", { timeout: 60_000 }, () => {
  it("the gateway's warning, svc mcp reload and svc mcp list name it and the fix", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify(cliConfig({}, { mcp_servers: { off: { command: "true", enabled: false } } })),
    );
    const status = join(home.dir, "mcp-cache", "status.json");
    mkdirSync(status, { recursive: true });
    const named = `${status}: it is a directory: move it away (svc keeps the running gateway's MCP status in a file of that name)`;
    const gateway = await startCliGateway(home, children);
    const pid = gateway.child.pid;
    await waitFor(() => gateway.output().includes("could not write the status file"), "the warning");
    expect(gateway.output()).toContain(
      `WARN [mcp] could not write the status file (${named}); it is tried again every 5 s (said once until it is written)`,
    );

    const reload = await svc(home, ["mcp", "reload"]);
    expect(reload).toMatchObject({
      code: 1,
      stdout: "",
      stderr: `svc: sent SIGHUP to the gateway (pid ${pid}), but it cannot report the reload: ${named} — its log says how the reload went (${join(home.dir, "logs", "gateway.log")})\n`,
    });

    const list = await svc(home, ["mcp", "list", "--no-check"]);
    expect(list.code).toBe(0);
    expect(list.stderr).toBe(
      `Note: a gateway is running (pid ${pid}), but ${named}, so its live status cannot be shown: below is the configuration-only view — once it is moved, the gateway writes the status file again by itself\n`,
    );

    rmdirSync(status);
    await waitFor(
      () => gateway.output().includes("[mcp] the status file is written again"),
      "the status file",
    );
    const live = await svc(home, ["mcp", "list", "--no-check"]);
    expect(live).toMatchObject({ code: 0, stderr: "" });
  });
});
