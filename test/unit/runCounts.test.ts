import { describe, expect, it } from "vitest";
import { runsByRoute } from "../../src/gateway/runCounts.js";

describe("runsByRoute (the one summary line for a backlog)", () => {
  it("counts runs per route, busiest first, and names at most ten routes", () => {
    const runs = [
      ...Array.from({ length: 100_000 }, () => ({ routeName: "pr" })),
      { routeName: "deploy" },
      { routeName: "deploy" },
      { routeName: "alert" },
    ];
    expect(runsByRoute(runs)).toBe("pr: 100000, deploy: 2, alert: 1");
    const many = Array.from({ length: 12 }, (_, i) => ({ routeName: `r${String(i).padStart(2, "0")}` }));
    expect(runsByRoute(many)).toBe(
      "r00: 1, r01: 1, r02: 1, r03: 1, r04: 1, r05: 1, r06: 1, r07: 1, r08: 1, r09: 1, +2 more route(s)",
    );
  });
});
