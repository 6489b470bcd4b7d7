import { describe, expect, it } from "vitest";
import type { RouteTable } from "../../src/actors/routes.js";
import { answeredByRoute } from "../../src/gateway/routeAnswers.js";
import type { ResolvedRoute } from "../../src/streams/context.js";

/** A registry with static route `pr` and subscription `sub`, counting the subscription lookups. */
function registry() {
  const looked: string[] = [];
  const route = { name: "x" } as ResolvedRoute;
  const table = { staticRoutes: new Map([["pr", route]]) } as unknown as RouteTable;
  return {
    looked,
    registry: {
      current: () => table,
      lookup: (name: string) => {
        looked.push(name);
        return name === "sub" ? route : undefined;
      },
    },
  };
}

describe("whether an answer came from a served route (metrics label, delivery history)", () => {
  it("a name no route has is not one, whatever the answer given before the route was looked up", () => {
    const { registry: r } = registry();
    const isRoute = answeredByRoute(r);
    // node:http's 417 (unknown Expect) and 431, a 503 while stopping: on the head alone.
    for (const status of [404, 405, 400, 417, 431, 408, 503, 500])
      expect(isRoute("evil", status)).toBe(false);
  });

  it("a static route is one whatever its answer; a subscription by the answers only a found route gets, else looked up", () => {
    const { registry: r, looked } = registry();
    const isRoute = answeredByRoute(r);
    expect(isRoute("pr", 404)).toBe(true);
    expect(isRoute("pr", 417)).toBe(true);
    for (const status of [200, 202, 401, 413, 429, 502]) expect(isRoute("sub", status)).toBe(true);
    expect(looked).toEqual([]);
    expect(isRoute("sub", 503)).toBe(true);
    expect(isRoute("sub", 404)).toBe(false);
    expect(looked).toEqual(["sub"]);
  });
});
