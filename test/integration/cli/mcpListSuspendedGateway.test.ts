import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { processStat } from "../../../src/io/processAlive.js";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { signalProcess } from "../../helpers/process.js";
import { cliConfig, type Foreground, killIfRunning, runForeground, svc, waitFor } from "./svc.js";

/**
 * svc mcp list against a suspended gateway (kill -STOP) showed the states its status file last recorded as
 * live, exit 0, while svc gateway status said it was not answering: now a note says so, exit 1.
 */
const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

let home: TempHome | undefined;
let gateway: Foreground | undefined;
afterEach(async () => {
  const pid = gateway?.child.pid;
  if (pid !== undefined && gateway?.child.exitCode === null) signalProcess(pid, "SIGCONT");
  await killIfRunning(gateway);
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

it("svc mcp list of a suspended gateway says its states are those it last wrote, and how to resume it (exit 1)", {
  timeout: 60_000,
}, async () => {
  const own = tempHome();
  home = own;
  own.write(
    "config.yaml",
    stringify({
      ...cliConfig({ r: { secret: "INSECURE_NO_AUTH" } }),
      mcp_servers: { fx: { command: process.execPath, args: [SERVER] } },
    }),
  );
  const run = await runForeground(own);
  gateway = run;
  const pid = run.child.pid as number;
  await waitFor(
    () => readStatusFile(join(own.dir, "mcp-cache"))?.servers.some((s) => s.state === "connected") === true,
    "fx connected",
  );
  const answering = await svc(own, ["mcp", "list"]);
  expect(answering.code).toBe(0);
  expect(answering.stderr).toBe("");
  signalProcess(pid, "SIGSTOP");
  await waitFor(() => processStat(pid)?.state === "T", "the suspension");
  const written = readStatusFile(join(own.dir, "mcp-cache"))?.updatedAt;
  const list = await svc(own, ["mcp", "list"]);
  expect(list.stdout).toMatch(/^fx\s+stdio\s+connected/m);
  expect(list.stderr).toBe(
    `Note: the gateway (pid ${pid}) is not answering (its process is suspended — kill -CONT ${pid}) — the states below are those it last wrote, at ${written}\n`,
  );
  expect(list.code).toBe(1);
  const offline = await svc(own, ["mcp", "list", "--no-check"]);
  expect(offline.stderr).toContain(`Note: the gateway (pid ${pid}) is not answering`);
  expect(offline.code).toBe(1);
  signalProcess(pid, "SIGCONT");
  await waitFor(() => processStat(pid)?.state !== "T", "the resumption");
  const resumed = await svc(own, ["mcp", "list"]);
  expect(resumed.stderr).toBe("");
  expect(resumed.code).toBe(0);
});
