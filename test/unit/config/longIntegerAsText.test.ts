import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

/**
 * YAML keeps a whole number past 2^53 as its digits (a Discord or Slack id written unquoted): under a key
 * that takes text only, `secret: 12345678901234567890123` passed and was used as those digits, where
 * `secret: 123456789012345` is refused as a number. Both are refused alike now.
 */

function load(yaml: string): { error?: string; config?: ReturnType<typeof loadConfig>["config"] } {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", yaml, 0o600);
  try {
    return { config: loadConfig({ home: h.dir, env: {} }).config };
  } catch (err) {
    return { error: (err as Error).message.replaceAll(file, "FILE") };
  }
}

const webhook = (keys: string) => `platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n${keys}`;
const LONG = "12345678901234567890123";

describe("an unquoted integer past 2^53 under a key that takes text", () => {
  it.each([
    ["a webhook secret", webhook(`    secret: ${LONG}\n`), "platforms.webhook.secret"],
    [
      "a secret under extra",
      webhook(`    extra:\n      secret: ${LONG}\n`),
      "platforms.webhook.extra.secret",
    ],
    [
      "a route's secret",
      webhook(`    secret: abcdefghijklmnop1234\n    routes:\n      gh: {secret: ${LONG}}\n`),
      "platforms.webhook.routes.gh.secret",
    ],
    ["agent.api_key", `agent: {provider: openai, model: m, api_key: ${LONG}}\n`, "agent.api_key"],
  ])("%s: refused as a smaller one is, the value not shown", (_, yaml, key) => {
    const { error } = load(yaml);
    const small = load(yaml.replace(LONG, "123456789012345")).error;
    const message = `FILE: ${key}: expected a string, got a number (not shown: the key holds a secret) — put it in quotes if it is meant as text`;
    expect(error).toContain(message);
    expect(small).toContain(message);
    expect(error).not.toContain(LONG);
  });

  it.each([
    ["agent.model", "model"],
    ["agent.system_prompt", "system_prompt"],
  ])("%s: refused with the number shown, as a smaller one is", (_, key) => {
    const { error } = load(
      `agent:\n  provider: openai\n  ${key}: ${LONG}\n${key === "model" ? "" : "  model: m\n"}`,
    );
    expect(error).toContain(
      `FILE: agent.${key}: expected a string, got ${LONG} — put it in quotes if it is meant as text`,
    );
  });

  it("in quotes it is the text, and a key that takes a number as well (a chat id) keeps its digits", () => {
    const quoted = load(webhook(`    secret: "${LONG}"\n`));
    expect(quoted.error).toBeUndefined();
    expect(quoted.config?.platforms.webhook.secret).toBe(LONG);
    const id = load(
      `${webhook("    secret: abcdefghijklmnop1234\n")}  telegram:\n    enabled: true\n    token: "123:abc"\n    home_channel: 1234567890123456789\n`,
    );
    expect(id.error).toBeUndefined();
    expect(id.config?.platforms.telegram?.home_channel).toBe("1234567890123456789");
  });
});
