import { describe, expect, it, vi } from "vitest";
import { stdioEntry, useHubs } from "./harness.js";

const ctx = useHubs();

/** A server slow to exit once its stdin closes: stopping it (a reload of its changed entry) takes a while. */
const lingering = (extra: Record<string, unknown> = {}) =>
  stdioEntry("legacy", extra, ["--linger-ms", "1500"]);

const stateOf = (h: ReturnType<typeof ctx.hub>, server: string) =>
  h.status().find((s) => s.name === server)?.state;

/**
 * A reload that changes or removes many servers (40 in a large configuration) stops them side by side:
 * one after another, each waited for the one before it to exit (40 stdio servers: ~6 s; servers slow to
 * stop, seconds each).
 */
describe("a reload of many changed servers", () => {
  it("stops the changed and the removed servers side by side, then connects the changed ones again", async () => {
    const names = ["a", "b", "c"];
    const h = ctx.hub(ctx.home, { a: lingering(), b: lingering(), c: lingering(), gone: lingering() });
    for (const name of [...names, "gone"]) await h.settled(name);
    const reload = h.reload({
      a: lingering({ timeout: 77 }),
      b: lingering({ timeout: 77 }),
      c: lingering({ timeout: 77 }),
    });
    // Each is told to stop at once: none waits for another to exit first.
    await vi.waitFor(
      () =>
        expect([...names, "gone"].map((name) => stateOf(h, name))).toEqual([
          "stopped",
          "stopped",
          "stopped",
          "stopped",
        ]),
      { timeout: 10_000 },
    );
    expect(await reload).toMatchObject({ changed: names, removed: ["gone"] });
    for (const name of names) await h.settled(name);
    expect(h.status().map((s) => [s.name, s.state])).toEqual(names.map((name) => [name, "connected"]));
  });
});
