import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { tempHome } from "../../helpers/home.js";
import { CLI_NODE_ARGS, cliConfig, MAIN, runNode, svc } from "./svc.js";

const STEP_CLOCK = join(import.meta.dirname, "../../helpers/stepClockAfterTerm.mjs");

describe("svc gateway stop across a step of the system clock", { timeout: 90_000 }, () => {
  const home = tempHome();
  afterAll(async () => {
    await svc(home, ["gateway", "stop"]);
    home.cleanup();
  });

  it("a clock stepped forward an hour while it waits does not end the wait as a timeout (exit 0, not 1)", async () => {
    home.write("config.yaml", stringify(cliConfig({ gh: { secret: "INSECURE_NO_AUTH" } })));
    expect((await svc(home, ["gateway", "start", "--timeout", "60"])).code).toBe(0);
    const stopped = await runNode(home, [...CLI_NODE_ARGS, "--import", STEP_CLOCK, MAIN, "gateway", "stop"]);
    expect(stopped.stderr).not.toContain("still running after");
    expect(stopped.code).toBe(0);
    expect(stopped.stdout).toContain("Gateway stopped");
  });
});
