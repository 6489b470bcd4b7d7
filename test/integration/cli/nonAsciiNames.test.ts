import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * Route, profile and cron job names are ASCII letters, digits and a few signs (docs/configuration.md). "Use
 * letters" alone reads as any script's: `café` is letters, so the refusal names the character it took.
 */
let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

describe("a name with a character outside ASCII is refused naming that character", {
  timeout: 90_000,
}, () => {
  it("a config.yaml route, and a route bound to such a profile", async () => {
    home.write(
      "config.yaml",
      stringify({
        platforms: {
          webhook: {
            enabled: true,
            host: "127.0.0.1",
            port: 0,
            routes: { café: { secret: "s" }, ok: { secret: "s", profile: "prod😀" } },
          },
        },
      }),
    );
    const res = await svc(home, ["config", "check"]);
    expect(res.code).toBe(1);
    const file = join(home.dir, "config.yaml");
    expect(res.stderr).toContain(
      `${file}: platforms.webhook.routes.café: invalid name — route names use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit) — ASCII only: "é" is not`,
    );
    expect(res.stderr).toContain(
      `${file}: platforms.webhook.routes.ok.profile: profile names use letters, digits, "_" and "-" (1-64, starting with a letter or digit) — ASCII only: "😀" is not`,
    );
  });

  it("svc webhook subscribe and svc cron create", async () => {
    const subscribe = await svc(home, ["webhook", "subscribe", "überweisung"]);
    expect(subscribe.code).toBe(2);
    expect(subscribe.stderr).toContain(
      `"überweisung" is not a valid route name: use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit) — ASCII only: "ü" is not`,
    );
    const cron = await svc(home, [
      "cron",
      "create",
      "--name",
      "nächtlich",
      "--schedule",
      "@daily",
      "--prompt",
      "x",
    ]);
    expect(cron.code).toBe(2);
    const add = await svc(home, ["mcp", "add", "ünï", "--", "node", "server.js"]);
    expect(add.code).toBe(2);
    expect(add.stderr).toContain(
      'name "ünï" is not a valid server name: use letters, digits, ".", "_" and "-" (1-64 characters) — ASCII only: "ü" is not',
    );
    expect(cron.stderr).toContain(
      `--name "nächtlich": use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit) — ASCII only: "ä" is not`,
    );
  });
});
