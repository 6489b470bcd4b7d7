import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { svcHome } from "../../../src/config/paths.js";

describe("the data directory (SVC_HOME, issue 2 item 2)", () => {
  it("is ~/.svc without SVC_HOME (or with an empty one)", () => {
    expect(svcHome({})).toBe(join(homedir(), ".svc"));
    expect(svcHome({ SVC_HOME: " " })).toBe(join(homedir(), ".svc"));
  });

  it("a relative SVC_HOME is taken from the working directory; a leading ~ is the user's home, as a shell reads it", () => {
    expect(svcHome({ SVC_HOME: "data/svc" })).toBe(resolve("data/svc"));
    expect(svcHome({ SVC_HOME: "/srv/svc/" })).toBe("/srv/svc");
    expect(svcHome({ SVC_HOME: "~/.svc-work" })).toBe(join(homedir(), ".svc-work"));
    expect(svcHome({ SVC_HOME: "~" })).toBe(homedir());
    expect(svcHome({ SVC_HOME: "~other/x" })).toBe(resolve("~other/x"));
  });
});
