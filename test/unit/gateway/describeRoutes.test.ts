import { describe, expect, it } from "vitest";
import { describeRoutes, ROUTES_NAMED } from "../../../src/gateway/config.js";

describe("the route names of the Listening and Reloaded lines", () => {
  it("names every route up to the limit, then the first of them and how many more", () => {
    expect(describeRoutes([])).toBe("(none)");
    expect(describeRoutes(["github", "stripe"])).toBe("github, stripe");
    const names = Array.from({ length: 2501 }, (_, i) => `route${i}`);
    expect(describeRoutes(names.slice(0, ROUTES_NAMED))).toBe(names.slice(0, ROUTES_NAMED).join(", "));
    // 2,501 routes made one line of ~23,000 characters at each start and reload.
    const line = describeRoutes(names);
    expect(line).toBe(
      `${names.slice(0, ROUTES_NAMED).join(", ")} and 2451 more (2501 in all: svc webhook list names them)`,
    );
    expect(line.length).toBeLessThan(700);
  });
});
