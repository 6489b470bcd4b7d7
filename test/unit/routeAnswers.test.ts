import { describe, expect, it } from "vitest";
import type { RouteTable } from "../../src/actors/routes.js";
import { answeredByRoute } from "../../src/gateway/routeAnswers.js";
import type { ResolvedRoute } from "../../src/streams/context.js";

/**
 * A registry with static routes `pr` (unbound) and `w` (bound to profile `work`) and subscription `sub`
 * (bound to `work`), counting the subscription lookups.
 */
function registry(multiplexProfiles = false) {
  const looked: string[] = [];
  const route = { name: "x", profile: "default" } as ResolvedRoute;
  const work = { name: "w", profile: "work" } as ResolvedRoute;
  const table = {
    multiplexProfiles,
    staticRoutes: new Map([
      ["pr", route],
      ["w", work],
    ]),
  } as unknown as RouteTable;
  return {
    looked,
    registry: {
      current: () => table,
      lookup: (name: string) => {
        looked.push(name);
        return name === "sub" ? work : undefined;
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
      expect(isRoute("evil", status, undefined)).toBe(false);
  });

  it("a static route is one whatever its answer but 404 (the unknown route's); a subscription by the answers only a found route gets, else looked up", () => {
    const { registry: r, looked } = registry();
    const isRoute = answeredByRoute(r);
    expect(isRoute("pr", 404, undefined)).toBe(false);
    expect(isRoute("pr", 417, undefined)).toBe(true);
    expect(isRoute("pr", 405, undefined)).toBe(true);
    // Multiplexing off: a route's profile is not enforced, its path is /webhooks/<name>.
    expect(isRoute("w", 503, undefined)).toBe(true);
    for (const status of [200, 202, 401, 413, 429, 502]) expect(isRoute("sub", status, undefined)).toBe(true);
    expect(looked).toEqual([]);
    expect(isRoute("sub", 503, undefined)).toBe(true);
    expect(isRoute("sub", 404, undefined)).toBe(false);
    expect(looked).toEqual(["sub"]);
    // A subscription's 405 and its 400 (a signed body that is no JSON) are its own, as a static route's are.
    expect(isRoute("sub", 405, undefined)).toBe(true);
    expect(isRoute("sub", 400, undefined)).toBe(true);
  });

  it("with multiplexing, a route asked for under another profile than its own is not one (it is answered as unknown)", () => {
    const { registry: r } = registry(true);
    const isRoute = answeredByRoute(r);
    // A 503 while stopping or node:http's 417 comes before the lookup: the path decides.
    for (const status of [503, 417]) {
      expect(isRoute("w", status, "work")).toBe(true);
      expect(isRoute("w", status, "play")).toBe(false);
      expect(isRoute("w", status, undefined)).toBe(false);
      expect(isRoute("pr", status, undefined)).toBe(true);
      expect(isRoute("pr", status, "default")).toBe(true);
      expect(isRoute("pr", status, "work")).toBe(false);
      expect(isRoute("sub", status, "work")).toBe(true);
      expect(isRoute("sub", status, "x1")).toBe(false);
    }
  });
});
