import { describe, expect, it } from "vitest";
import { runKey } from "../../../src/state/liveState.js";
import { seenKey } from "../../../src/streams/stages/idempotency.js";

describe("seenKey: one key per route and delivery id, the last one handed out again", () => {
  it("gives each pair its own key, whatever came before it", () => {
    const pairs: Array<[string, string]> = [
      ["pr", "d-1"],
      ["pr", "d-1"],
      ["pr", "d-2"],
      ["ci", "d-2"],
      ["pr", "d-2"],
      ["ci", "d-1"],
      ["ci", "d-1"],
      ["pr", ""],
      ["", "d-1"],
      ["pr", "d-1"],
    ];
    for (const [route, id] of pairs) expect(seenKey(route, id)).toBe(`${route}:${id}`);
  });

  it("ids equal in text but made apart (as each request's header is) give the same key", () => {
    const id = ["7f1c", "2b9e"].join("-");
    const first = seenKey("pr", id);
    expect(seenKey("pr", `7f1c-${"2b9e"}`)).toBe(first);
    expect(seenKey("pr", `${id}x`)).toBe("pr:7f1c-2b9ex");
  });

  it("is the journal's run key: the live mirror and the idempotency cache name a run alike", () => {
    expect(runKey("pr", "d-9")).toBe(seenKey("pr", "d-9"));
    expect(runKey("ci", "d-9")).toBe("ci:d-9");
  });
});
