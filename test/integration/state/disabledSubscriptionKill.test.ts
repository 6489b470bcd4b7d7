import { afterEach, describe, expect, it, vi } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { type Foreground, killIfRunning, runForeground, svc } from "../cli/svc.js";
import { agentsAlive, deliver, liveOnDisk, openGate, runCounts, SECRET, writeConfig } from "./killHelpers.js";

/**
 * docs/durability.md: a run the local journal saved whose route is not served at the next start stays in the
 * journal and runs at the next start that finds its route. When that route is a subscription disabled while
 * the gateway was down, the start's warning says so, and how to bring it back, rather than that it no
 * longer exists.
 */

const homes: TempHome[] = [];
const gateways: Foreground[] = [];
afterEach(async () => {
  for (const gateway of gateways.splice(0)) await killIfRunning(gateway);
  for (const home of homes.splice(0)) home.cleanup();
});

async function start(home: TempHome): Promise<Foreground> {
  const gateway = await runForeground(home);
  gateways.push(gateway);
  return gateway;
}

describe("a saved run of a subscription disabled while the gateway was down", { timeout: 60_000 }, () => {
  it("is named as a disabled subscription at the next start, with the command that brings it back; enabled, it runs at the start after", async () => {
    const home = tempHome();
    homes.push(home);
    writeConfig(home, {});
    expect((await svc(home, ["webhook", "subscribe", "deploys", "--secret", SECRET])).code).toBe(0);
    const first = await start(home);
    // The gate is shut: the run waits in its agent when the gateway is killed.
    expect(await deliver(first.port, "deploys", "d-1")).toMatchObject({ status: 202 });
    first.child.kill("SIGKILL");
    await first.exited;
    await vi.waitFor(() => expect(agentsAlive(home)).toBe(0), { timeout: 15_000, interval: 20 });
    expect((await svc(home, ["webhook", "disable", "deploys"])).code).toBe(0);
    const second = await start(home);
    await vi.waitFor(() => expect(second.stdout()).toContain("not resumed"), { timeout: 10_000 });
    expect(second.stdout()).toContain(
      "[webhook] 1 saved agent run(s) not resumed — their route is a disabled subscription (deploys: 1; svc webhook enable deploys, then restart the gateway); they stay in the journal",
    );
    expect(liveOnDisk(home).runs.size).toBe(1);
    second.child.kill("SIGKILL");
    await second.exited;
    expect((await svc(home, ["webhook", "enable", "deploys"])).code).toBe(0);
    openGate(home);
    await start(home);
    await vi.waitFor(() => expect(runCounts(home).get("d-1")).toBe(1), { timeout: 20_000, interval: 50 });
  });
});
