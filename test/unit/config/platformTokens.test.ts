import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A platform token pasted with a curly quote or a zero-width space passed the load and svc config check;
 * fetch then refused the header before any connection ("Cannot convert argument to a ByteString"), which
 * each delivery reported as a connection failure and retried three times, naming no key.
 */
let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

function load(platform: string, token: string): unknown {
  home = tempHome();
  home.write("config.yaml", `platforms:\n  ${platform}: {enabled: true, token: '\${TOKEN}'}\n`);
  try {
    return loadConfig({ home: home.dir, env: { TOKEN: token } });
  } catch (err) {
    return err;
  }
}

describe("platform tokens", () => {
  it("a character outside printable ASCII is refused at load, naming the key, the character and the fix, never the token", () => {
    for (const [platform, token, code, at] of [
      ["mattermost", "abc-secret-1\u201d", "U+201D", 13],
      ["slack", "xoxb-secret-2\u200b", "U+200B", 14],
      ["telegram", "123:secret-3\n", "U+000A", 13],
    ] as const) {
      const error = load(platform, token);
      expect(error).toBeInstanceOf(Error);
      const message = (error as Error).message;
      expect(message).toContain(
        `config.yaml: platforms.${platform}.token: holds ${code} at character ${at}, which an HTTP request cannot carry — write the token again from the platform's page, printable ASCII only`,
      );
      expect(message).not.toContain(token.slice(0, -1));
    }
  });

  it("a printable ASCII token loads, spaces and punctuation included", () => {
    for (const platform of ["discord", "matrix", "home_automation"])
      expect(load(platform, "syt_a+b/c=d e~f")).not.toBeInstanceOf(Error);
  });
});
