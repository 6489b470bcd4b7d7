import { afterEach, describe, expect, it, vi } from "vitest";
import { type FixtureHttp, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { entry, text, useHubs } from "./harness.js";

const servers: FixtureHttp[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const ctx = useHubs();

/**
 * "SIGHUP re-reads config.yaml and .env (a new ${VAR} value there applies)": a token rotated in .env and
 * a reload (`svc mcp reload`, a chat `/reload-mcp`) must reach a server that is connected, though its
 * entry in config.yaml did not change — not only after the next connection loss.
 */
describe("reload after a variable of a connected server changed in .env", () => {
  it("reconnects it with the new value, and leaves it alone when nothing changed", async () => {
    const s = await startStreamableHttp();
    servers.push(s);
    ctx.home.write(".env", "WEB_TOKEN=old-token\n");
    const config = { web: entry({ url: s.url, headers: { Authorization: "Bearer ${WEB_TOKEN}" } }) };
    const h = ctx.hub(ctx.home, config);
    expect((await h.settled("web")).state).toBe("connected");
    expect(s.lastHeaders().authorization).toBe("Bearer old-token");

    expect((await h.reload(config)).unchanged).toEqual(["web"]);

    ctx.home.write(".env", "WEB_TOKEN=new-token\n");
    const summary = await h.reload(config);
    expect(summary.changed).toEqual(["web"]);
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("connected"), { timeout: 5000, interval: 20 });
    expect(text(await h.call("web", "echo", { text: "ok" }))).toBe("ok");
    expect(s.lastHeaders().authorization).toBe("Bearer new-token");
  });
});
