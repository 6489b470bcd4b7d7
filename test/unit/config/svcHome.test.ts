import { homedir, userInfo } from "node:os";
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

  it("an empty HOME counts as unset (the user database's home), not as the working directory's .svc", () => {
    const saved = process.env.HOME;
    try {
      for (const empty of ["", "  "]) {
        process.env.HOME = empty;
        expect(svcHome({})).toBe(join(userInfo().homedir, ".svc"));
        expect(svcHome({ SVC_HOME: "~/.svc-work" })).toBe(join(userInfo().homedir, ".svc-work"));
      }
    } finally {
      if (saved === undefined) delete process.env.HOME;
      else process.env.HOME = saved;
    }
  });
});
