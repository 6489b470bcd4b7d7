import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * `svc gateway stop` removes the stopped gateway's gateway.json once it has exited, and only its own: the
 * record of a gateway started since is that one's. It judged the record by its pid alone, where the gateway
 * itself judges its own by pid and PID namespace (recordsThisProcess): a gateway of another namespace (a
 * container sharing this SVC_HOME) that took the home over while this one stopped, whose pid there has the
 * same number (two containers' gateways are both pid 1), had its record removed.
 */

let home: TempHome | undefined;
afterEach(async () => {
  if (home !== undefined) await svc(home, ["gateway", "stop"]);
  home?.cleanup();
  home = undefined;
});

describe.runIf(pidNamespace() !== undefined)("svc gateway stop", { timeout: 90_000 }, () => {
  it("leaves a gateway.json that records the stopped gateway's pid for another PID namespace", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({ gh: { secret: "INSECURE_NO_AUTH" } })), 0o600);
    expect((await svc(home, ["gateway", "start", "--timeout", "60"])).code).toBe(0);
    const pid = Number(readFileSync(join(home.dir, "gateway.pid"), "utf8"));
    const stateFile = join(home.dir, "gateway.json");
    const stopped = svc(home, ["gateway", "stop"]);
    // Once the gateway began stopping (it wrote its last record) or removed its record at its exit, before the
    // command's next look (every 100 ms), a gateway of another namespace, pid `pid` there, writes its own.
    const stopping = () => {
      try {
        return JSON.parse(readFileSync(stateFile, "utf8")).stopping_since !== undefined;
      } catch {
        return !existsSync(stateFile);
      }
    };
    await vi.waitFor(() => expect(stopping()).toBe(true), { timeout: 30_000, interval: 2 });
    const theirs = `${JSON.stringify({ pid, pid_namespace: "pid:[4026530000]", host: "127.0.0.1", port: 1 })}\n`;
    writeFileSync(stateFile, theirs, { mode: 0o600 });
    const result = await stopped;
    expect(result.stdout).toContain("Gateway stopped");
    expect(result.code).toBe(0);
    expect(existsSync(stateFile)).toBe(true);
    expect(readFileSync(stateFile, "utf8")).toBe(theirs);
  });
});
