import { afterEach, describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { type FixtureHttp, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { entry, text, useHubs } from "./harness.js";

const servers: FixtureHttp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const ctx = useHubs();

/**
 * Spec 3 "/reload-mcp reloads servers after a change" and 2.3 "the next connect attempt re-renders
 * it": after the user adds the missing secret to .env and reloads, a failed server connects at once —
 * it does not sit out its backoff (up to five minutes) although its entry did not change.
 */
describe("reload of an unchanged server that failed", () => {
  it("connects at once with the secret added to .env since", async () => {
    const s = await startStreamableHttp();
    servers.push(s);
    const clock = new SimulatedClock();
    const servers1 = { web: entry({ url: s.url, headers: { Authorization: "Bearer ${WEB_TOKEN}" } }) };
    const h = ctx.hub(ctx.home, servers1, { clock });
    expect((await h.settled("web")).lastError).toMatch(/\$\{WEB_TOKEN\} is not set/);

    ctx.home.write(".env", "WEB_TOKEN=now-set\n");
    const summary = await h.reload(servers1);
    expect(summary.unchanged).toEqual(["web"]);
    // The simulated clock never advances: only the reload can have started this connect.
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("connected"), { timeout: 5000, interval: 20 });
    expect(s.lastHeaders().authorization).toBe("Bearer now-set");
    expect(text(await h.call("web", "echo", { text: "ok" }))).toBe("ok");
  });
});
