import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readEnvFile } from "../../../src/config/envFile.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc gateway setup, interactive: only the offered answers count", { timeout: 90_000 }, () => {
  it("an unknown answer to enable? or to the secret question is explained and asked again; keep without a secret is refused", async () => {
    home = tempHome();
    const res = await svc(home, ["gateway", "setup"], { input: "maybe\nn\n9000\nk\nx\ng\n" });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('answer y or n (empty: y), not "maybe"');
    expect(res.stdout).toContain('answer g or e (there is no current secret to keep), not "k"');
    expect(res.stdout).toContain('answer g or e (there is no current secret to keep), not "x"');
    const env = readEnvFile(join(home.dir, ".env"));
    expect(env).toMatchObject({ WEBHOOK_ENABLED: "false", WEBHOOK_PORT: "9000" });
    expect(env.WEBHOOK_SECRET).toMatch(/^[0-9a-f]{64}$/);
  });

  it("with a current secret, a typo does not replace it: asked again, then kept", async () => {
    home = tempHome();
    home.write(".env", "WEBHOOK_SECRET=mine\n");
    const res = await svc(home, ["gateway", "setup"], { input: "y\n\nkep\n\n" });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('answer k, g or e, not "kep"');
    expect(readFileSync(join(home.dir, ".env"), "utf8")).toContain("WEBHOOK_SECRET=mine\n");
  });

  it("piped answers that end at the secret to enter, which has no default, cancel setup (exit 1): nothing is written", async () => {
    home = tempHome();
    for (const input of ["y\n\ne\n", "y\n\ne\n\n"]) {
      const res = await svc(home, ["gateway", "setup"], { input });
      expect(res.code).toBe(1);
      expect(res.stderr).toBe(
        "svc: setup cancelled (end of input: the secret was not entered): nothing was written\n",
      );
      expect(existsSync(join(home.dir, ".env"))).toBe(false);
    }
  });
});
