import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { handWrittenJobs } from "../../helpers/cronJobs.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc, svcEach } from "./svc.js";

/**
 * A subscription record written by hand or by another tool may hold any text: its warnings and notes on
 * stderr (`svc config check`, `svc webhook list`) showed escape sequences and bidi overrides raw, so the
 * record could retitle the terminal window, recolour or reorder what follows.
 */
let home: TempHome;
afterEach(() => home.cleanup());

const HOSTILE = "tele\u001b]0;PWN\u0007\u001b[31m\u202egram";

describe("text of a record shown by the CLI's warnings and notes", () => {
  it("control and bidi characters are escaped, never written raw", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig()), 0o600);
    home.write(
      "webhook_subscriptions.json",
      JSON.stringify({
        sube: { enabled: true, secret: "sub-secret-123", deliver: HOSTILE, script: `nope${HOSTILE}.py` },
      }),
      0o600,
    );
    const [check, list] = await svcEach(home, [
      ["config", "check"],
      ["webhook", "list"],
    ]);
    for (const res of [check, list]) {
      for (const raw of ["\u001b", "\u0007", "\u202e"]) {
        expect(res.stderr).not.toContain(raw);
        expect(res.stdout).not.toContain(raw);
      }
    }
    expect(check.stderr).toContain('unknown target "tele\\u001b]0;PWN\\u0007\\u001b[31m\\u202egram"');
    expect(list.stderr).toContain('Note: sube: deliver: unknown target "tele\\u001b]0;PWN\\u0007');
  });

  it("so are a hand-written cron job's, in svc cron list", async () => {
    home = tempHome();
    home.write(
      "cron/jobs.json",
      handWrittenJobs({
        copy0001: { name: `night${HOSTILE}` },
        copy0002: { name: `night${HOSTILE}` },
        when0001: { name: "when", next_run: `soon${HOSTILE}` },
      }),
    );
    const list = await svc(home, ["cron", "list"]);
    expect(list.code).toBe(0);
    for (const raw of ["\u001b", "\u0007", "\u202e"]) expect(list.stderr).not.toContain(raw);
    expect(list.stderr).toContain("are named night" + "tele\\u001b]0;PWN");
    expect(list.stderr).toContain('Warning: when (when0001): next_run "soontele\\u001b]0;PWN');
    // Removing one (the way out for a record written by hand) names it as list shows it.
    const removed = await svc(home, ["cron", "remove", "copy0002"]);
    expect(removed.code).toBe(0);
    for (const raw of ["\u001b", "\u0007", "\u202e"]) expect(removed.stdout).not.toContain(raw);
    expect(removed.stdout).toContain("Removed cron job copy0002 (nighttele\\u001b]0;PWN\\u0007");
  });
});
