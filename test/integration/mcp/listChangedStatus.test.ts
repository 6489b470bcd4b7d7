import { resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import type { ServerStatus } from "../../../src/io/mcp/statusFile.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { entry, stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

const COLLISION =
  'fx: "write.note" and "write-note" both register as mcp__fx__write_note; "write.note" is skipped';

describe("notifications/tools/list_changed", () => {
  it("publishes the server's new status (tool count, collisions) and logs a collision of its own once", async () => {
    const log = captureLogger();
    let published: ServerStatus[] = [];
    const h = ctx.hub(
      ctx.home,
      { fx: stdioEntry("legacy") },
      { logger: log.logger, onStatus: (statuses) => (published = statuses) },
    );
    const before = (await h.settled("fx")).toolCount;
    const fx = () => published.find((s) => s.name === "fx");
    // `write.note` sanitizes like the fixture's `write-note`; each addition makes the server send list_changed.
    await h.call("fx", "add-tool", { name: "write.note" });
    await vi.waitFor(() => expect(fx()?.collisions).toEqual([COLLISION]), { timeout: 5000, interval: 20 });
    await h.call("fx", "add-tool", { name: "brand-new" });
    await vi.waitFor(() => expect(fx()?.toolCount).toBe(before + 1), { timeout: 5000, interval: 20 });
    expect(h.tools().map((t) => t.name)).toContain("mcp__fx__brand_new");
    expect(fx()?.collisions).toEqual([COLLISION]);
    // Listed twice since the collision appeared: it is logged once.
    expect(log.messages().filter((m) => m.includes("tool name collision"))).toEqual([
      `[mcp] tool name collision: ${COLLISION}`,
    ]);
  });
});

describe("a tool listing of list_changed cut off by svc closing the session", () => {
  it("is not logged as a failed refresh (the server did nothing wrong: a stop, a reload, svc mcp call ending)", async () => {
    const log = captureLogger();
    const server = resolve(import.meta.dirname, "../../fixtures/mcp/slow-relist-server.mjs");
    const h = ctx.hub(
      ctx.home,
      { slow: entry({ command: process.execPath, args: [server] }) },
      { logger: log.logger },
    );
    await h.settled("slow");
    await h.call("slow", "change", {});
    // The server got the listing the notification asked for, and keeps it unanswered.
    await vi.waitFor(() => expect(log.messages()).toContain("[mcp:slow] listing again"), {
      timeout: 5000,
      interval: 20,
    });
    await h.stop();
    expect(log.messages().filter((m) => m.includes("refresh failed"))).toEqual([]);
  });
});

describe("a tool listing of list_changed the server never answers", () => {
  it("is logged with the wait and the key bounding it, not the SDK's request timeout", async () => {
    const log = captureLogger();
    const server = resolve(import.meta.dirname, "../../fixtures/mcp/slow-relist-server.mjs");
    const h = ctx.hub(
      ctx.home,
      { slow: entry({ command: process.execPath, args: [server], connect_timeout: 3 }) },
      { logger: log.logger },
    );
    await h.settled("slow");
    await h.call("slow", "change", {});
    const failed = () =>
      log
        .lines()
        .map((line) => JSON.parse(line) as { msg: string; err?: string })
        .filter((l) => l.msg === "[mcp] slow: tool list refresh failed");
    await vi.waitFor(() => expect(failed()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    expect(failed()[0]?.err).toBe("no answer within 3 s (connect_timeout)");
    // Its tools stay as last listed.
    expect(h.tools().map((t) => t.name)).toEqual(["mcp__slow__change"]);
  });
});
