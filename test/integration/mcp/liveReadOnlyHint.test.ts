import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { SimulatedClock } from "xstate";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { entry, recordingDeny, text, useHubs } from "./harness.js";

const HINT_FILE_FIXTURE = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/hint-file-server.mjs"),
);

const ctx = useHubs();

/**
 * The fixture's listing follows this file: "read-only" lists "publish" with readOnlyHint: true, "not-read-only"
 * with readOnlyHint: false in its annotations and the hint's other spellings true.
 */
function hintFile(hint: "read-only" | "writes" | "not-read-only"): string {
  const path = join(ctx.home.dir, "publish-hint-state");
  writeFileSync(path, hint);
  return path;
}

function untrusted(file: string, extra: Record<string, unknown> = {}) {
  return entry({ command: process.execPath, args: [HINT_FILE_FIXTURE, file], trust: "untrusted", ...extra });
}

/**
 * Trust rules: on an untrusted server the live server's readOnlyHint decides. A lazy server's tools are
 * registered from the schema cache, a recycled one's from its last process: the call connects first and is
 * judged by the listing the server gives then, whichever way the hint changed.
 */
describe("untrusted lazy server whose hint changed since the cached listing (real stdio server)", () => {
  /** A first hub lists the server (no cache yet: it connects eagerly) and caches that listing. */
  async function cacheListing(hint: "read-only" | "writes") {
    const server = untrusted(hintFile(hint), { lazy: true });
    const first = ctx.hub(ctx.home, { hf: server });
    expect((await first.settled("hf")).state).toBe("connected");
    await first.stop();
    return server;
  }

  it("a tool the cache has without readOnlyHint that the live server marks read-only runs without approval", async () => {
    const server = await cacheListing("writes");
    hintFile("read-only");
    const { asked, approvals } = recordingDeny();
    const h = ctx.hub(ctx.home, { hf: server }, { approvals });
    expect(h.status()[0]).toMatchObject({ state: "lazy", cached: true });
    expect(h.toolsOf("hf")[0]).toMatchObject({ original: "publish", readOnly: false });
    expect(text(await h.call("hf", "publish", {}))).toBe("publish ran");
    expect(asked).toEqual([]);
  });

  it("a tool the cache has as read-only that the live server no longer marks read-only asks, and is refused", async () => {
    const server = await cacheListing("read-only");
    hintFile("writes");
    const { asked, approvals } = recordingDeny();
    const h = ctx.hub(ctx.home, { hf: server }, { approvals });
    expect(h.status()[0]).toMatchObject({ state: "lazy", cached: true });
    expect(h.toolsOf("hf")[0]).toMatchObject({ original: "publish", readOnly: true });
    await expect(h.call("hf", "publish", {})).rejects.toMatchObject({
      code: "approval_denied",
      message: 'mcp_servers.hf: calling "publish" needs approval (trust: untrusted) and it was denied',
    });
    expect(asked).toEqual(["publish"]);
  });
});

describe("untrusted server recycled (idle_timeout_seconds) whose respawned process changed its hint (real stdio server)", () => {
  /** Connected, called once under `deny`, then recycled by its idle timeout on a simulated clock. */
  async function recycledAfterCall(hint: "read-only" | "writes") {
    const { asked, approvals } = recordingDeny();
    const clock = new SimulatedClock();
    const h = ctx.hub(
      ctx.home,
      { hf: untrusted(hintFile(hint), { idle_timeout_seconds: 60 }) },
      { approvals, clock },
    );
    expect((await h.settled("hf")).state).toBe("connected");
    const first = h.call("hf", "publish", {});
    if (hint === "read-only") expect(text(await first)).toBe("publish ran");
    else await expect(first).rejects.toMatchObject({ code: "approval_denied" });
    clock.increment(60_000);
    await vi.waitFor(() => expect(h.status()[0]?.state).toBe("recycled"), { timeout: 5000 });
    return { h, asked };
  }

  it("a tool the last process listed without readOnlyHint that the new one marks read-only runs without approval", async () => {
    const { h, asked } = await recycledAfterCall("writes");
    expect(asked).toEqual(["publish"]);
    hintFile("read-only");
    expect(text(await h.call("hf", "publish", {}))).toBe("publish ran");
    expect(asked).toEqual(["publish"]);
  });

  it("a tool the last process listed as read-only that the new one no longer marks read-only asks, and is refused", async () => {
    const { h, asked } = await recycledAfterCall("read-only");
    expect(asked).toEqual([]);
    hintFile("writes");
    await expect(h.call("hf", "publish", {})).rejects.toMatchObject({ code: "approval_denied" });
    expect(asked).toEqual(["publish"]);
  });
});

describe("untrusted server whose annotations say readOnlyHint: false (real stdio server)", () => {
  it("asks, and is refused, though the hint's other spellings (read_only_hint, one beside the annotations) say true", async () => {
    const { asked, approvals } = recordingDeny();
    const h = ctx.hub(ctx.home, { hf: untrusted(hintFile("not-read-only")) }, { approvals });
    expect((await h.settled("hf")).state).toBe("connected");
    expect(h.toolsOf("hf")[0]).toMatchObject({ original: "publish", readOnly: false });
    await expect(h.call("hf", "publish", {})).rejects.toMatchObject({ code: "approval_denied" });
    expect(asked).toEqual(["publish"]);
  });
});
