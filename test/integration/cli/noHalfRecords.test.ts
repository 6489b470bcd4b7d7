import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc, svcEach } from "./svc.js";

/**
 * `constructor`, `toString` and `hasOwnProperty` are valid route names (letters only), and also members
 * of every parsed JSON object's prototype: the store must treat them as names like any other.
 */
describe("svc webhook never writes a half record (spec 4.3)", { timeout: 60_000 }, () => {
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
    const answers = await svcEach(home, [
      ["webhook", "disable", "toString"],
      ["webhook", "remove", "hasOwnProperty"],
      ["webhook", "test", "valueOf"],
    ]);
    for (const [answer, name] of answers.map(
      (a, i) => [a, ["toString", "hasOwnProperty", "valueOf"][i]] as const,
    )) {
      expect(answer.code).toBe(2);
      expect(answer.stderr).toContain(`no dynamic subscription named "${name}"`);
    }
    expect(storeText()).toBe(before);
  });

  it("enable and disable of a hand-written record that is not a mapping are refused; remove removes it", async () => {
    home.write("webhook_subscriptions.json", JSON.stringify({ odd: 5, list: ["x"] }));
    const before = storeText();
    for (const [action, name] of [
      ["disable", "odd"],
      ["enable", "list"],
    ] as const) {
      const answer = await svc(home, ["webhook", action, name]);
      expect(answer.code).toBe(1);
      expect(answer.stderr).toContain(`${name} is not a subscription record`);
      expect(answer.stderr).toContain(`svc webhook remove ${name}`);
    }
    expect(storeText()).toBe(before);
    expect((await svc(home, ["webhook", "remove", "odd"])).code).toBe(0);
    expect(JSON.parse(storeText())).toEqual({ list: ["x"] });
  });
});
