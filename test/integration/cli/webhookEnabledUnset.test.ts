import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("the 'adapter not enabled' note when config.yaml does not write enabled", {
  timeout: 90_000,
}, () => {
  it("says the key is not set (false by default in a config.yaml), not that it is false", async () => {
    home = tempHome();
    home.write("config.yaml", "agent:\n  provider: echo\n");
    const res = await svc(home, ["webhook", "list"]);
    expect(res.stderr).toContain(
      `(${join(home.dir, "config.yaml")}: platforms.webhook.enabled is not set, and false is its default in a config.yaml)`,
    );
  });
});
