import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A subscription's name misspelt (`deplys` for `deploys`) was refused without naming the one meant, and
 * `svc webhook test` even offered `svc webhook subscribe deplys`, a second, misspelt subscription.
 */
describe("svc webhook test/remove/disable/enable of a misspelt subscription name", {
  timeout: 60_000,
}, () => {
  it("names the subscription meant, and offers no subscription of the misspelt name", async () => {
    home = tempHome();
    expect((await svc(home, ["webhook", "subscribe", "deploys"])).code).toBe(0);
    const store = join(home.dir, "webhook_subscriptions.json");
    const test = await svc(home, ["webhook", "test", "deplys"]);
    expect(test.code).toBe(2);
    expect(test.stderr).toContain(
      `no dynamic subscription named "deplys" in ${store} — did you mean deploys? (see svc webhook list)`,
    );
    expect(test.stderr).not.toContain("subscribe deplys");
    for (const action of ["remove", "disable", "enable"]) {
      const changed = await svc(home, ["webhook", action, "deplys"]);
      expect(changed.code).toBe(2);
      expect(changed.stderr).toContain(`"deplys" in ${store} — did you mean deploys? (see svc webhook list)`);
    }
    // A name like none of them keeps the advice to create it.
    const other = await svc(home, ["webhook", "test", "payments"]);
    expect(other.stderr).toContain("svc webhook subscribe payments creates one");
    expect(Object.keys(JSON.parse(readFileSync(store, "utf8")))).toEqual(["deploys"]);
  });

  it("names a two-letter subscription one letter from a two-letter name (gx for gh) when it is the only one that close", async () => {
    home = tempHome();
    expect((await svc(home, ["webhook", "subscribe", "gh"])).code).toBe(0);
    const store = join(home.dir, "webhook_subscriptions.json");
    for (const typo of ["gx", "hg"]) {
      const removed = await svc(home, ["webhook", "rm", typo]);
      expect(removed.code).toBe(2);
      expect(removed.stderr).toContain(`"${typo}" in ${store} — did you mean gh? (see svc webhook list)`);
    }
    // Two as close: neither is guessed.
    expect((await svc(home, ["webhook", "subscribe", "gl"])).code).toBe(0);
    const ambiguous = await svc(home, ["webhook", "rm", "gx"]);
    expect(ambiguous.stderr).toContain(
      `no dynamic subscription named "gx" in ${store} — see svc webhook list`,
    );
    expect(Object.keys(JSON.parse(readFileSync(store, "utf8")))).toEqual(["gh", "gl"]);
  });
});
