import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { svcPaths } from "../../../src/config/paths.js";
import { homeFileWarnings } from "../../../src/gateway/homeFileWarnings.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("what the start and each reload say of SVC_HOME's files", () => {
  it("a .env line whose name is no variable's, in the shared .env and a profile's, with its line", () => {
    home = tempHome();
    home.write(".env", "GOOD=1\n1BAD=x\n", 0o600);
    home.write("profiles/work/.env", "# MCP keys\nmy-key=y\n", 0o600);
    const warnings = homeFileWarnings(svcPaths(home.dir), false, {}).filter((w) =>
      w.includes("is not a variable name"),
    );
    expect(warnings).toEqual([
      expect.stringContaining(`[gateway] ${join(home.dir, ".env")}: line 2: 1BAD is not a variable name`),
      expect.stringContaining(
        `[gateway] ${join(home.dir, "profiles", "work", ".env")}: line 2: my-key is not a variable name`,
      ),
    ]);
  });
});
