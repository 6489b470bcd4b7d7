import { describe, expect, it } from "vitest";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { IN_MEMORY_ENTRY, inMemoryServers } from "../../helpers/inMemoryMcp.js";
import { entry, text, useHubs } from "../../integration/mcp/harness.js";

const ctx = useHubs();
const fixture = (extra: Record<string, unknown> = {}) => entry({ ...IN_MEMORY_ENTRY, ...extra });

/** svc mcp reload said "reconnected (changed)" of a server that was enabled: false, never connected. */
describe("a reload that turns enabled: false into enabled (SDK server over InMemoryTransport)", () => {
  it("reports the server as enabled, not changed, and it connects", async () => {
    const h = ctx.hub(
      ctx.home,
      { off: fixture({ enabled: false }) },
      { transportFor: inMemoryServers(() => buildServer()) },
    );
    expect(h.status().map((s) => s.state)).toEqual(["skipped"]);
    const summary = await h.reload({ off: fixture() });
    expect(summary).toMatchObject({ added: [], changed: [], disabled: [], enabled: ["off"] });
    await h.settled("off");
    expect(text(await h.call("off", "echo", { text: "hi" }))).toBe("hi");
  });

  /** svc mcp reload said "stopped (disabled)" of a disabled entry edited and left disabled: nothing ran. */
  it("reports a changed entry that stays enabled: false as changed, not stopped, and leaves it disabled", async () => {
    const h = ctx.hub(
      ctx.home,
      { off: fixture({ enabled: false }) },
      { transportFor: inMemoryServers(() => buildServer()) },
    );
    const summary = await h.reload({ off: fixture({ enabled: false, lazy: true }) });
    expect(summary).toMatchObject({ added: [], changed: ["off"], disabled: [], enabled: [] });
    expect(h.status().map((s) => s.state)).toEqual(["skipped"]);
  });
});
