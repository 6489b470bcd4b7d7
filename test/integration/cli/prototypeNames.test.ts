import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "./svc.js";

/**
 * `constructor`, `toString` and `hasOwnProperty` are valid route names (letters only), and also members
 * of every parsed JSON object's prototype: the store must treat them as names like any other.
 */
describe("svc webhook with names of Object.prototype's members (spec 4.3)", { timeout: 60_000 }, () => {
  let home: TempHome;
  beforeAll(() => {
    home = tempHome();
    home.write("config.yaml", stringify(cliConfig({})));
  });
  afterAll(() => home.cleanup());
  const storeText = () => readFileSync(join(home.dir, "webhook_subscriptions.json"), "utf8");

  it("subscribe creates such a route; disable, remove and test of one that does not exist are refused, writing nothing", async () => {
    const created = await svc(home, ["webhook", "subscribe", "constructor", "--prompt", "p"]);
    expect(created.code).toBe(0);
    expect(created.stdout).toContain("Subscribed constructor");
    expect(created.stderr).not.toContain("static route");
    expect(JSON.parse(storeText()).constructor).toMatchObject({ prompt: "p", enabled: true });
    const before = storeText();
    const answers = await Promise.all([
      svc(home, ["webhook", "disable", "toString"]),
      svc(home, ["webhook", "remove", "hasOwnProperty"]),
      svc(home, ["webhook", "test", "valueOf"]),
    ]);
    for (const [answer, name] of answers.map(
      (a, i) => [a, ["toString", "hasOwnProperty", "valueOf"][i]] as const,
    )) {
      expect(answer.code).toBe(2);
      expect(answer.stderr).toContain(`no dynamic subscription named "${name}"`);
    }
    expect(storeText()).toBe(before);
  });
});
