import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

const SECRET = "Sup3rS3cretVal";

/**
 * A URL that YAML read as a mapping's key (`url: {https://u:<password>@h/mcp}`, a template left unquoted)
 * was quoted with its password in the "got …" part of svc config check's line, where the fix after it
 * already showed it as [redacted].
 */
describe("svc config check and a URL read as a key", () => {
  it("names the value without the URL's password", async () => {
    const h = tempHome();
    home = h;
    const file = h.write(
      "config.yaml",
      `mcp_servers:\n  a:\n    url: {https://u:${SECRET}@h/mcp}\nstate:\n  redis_url:\n    redis://:${SECRET}@h:6379/0: 1\n`,
      0o600,
    );
    const check = await svc(h, ["config", "check"]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(
      `${file}: mcp_servers.a.url: expected a string, got {"https://u:[redacted]@h/mcp":null}`,
    );
    expect(check.stderr).toContain(
      `${file}: state.redis_url: expected a string, got {"redis://:[redacted]@h:6379/0":1}`,
    );
    expect(`${check.stdout}${check.stderr}`).not.toContain(SECRET);
  });
});
