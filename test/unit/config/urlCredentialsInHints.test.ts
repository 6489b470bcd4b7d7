import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { textWithoutUrlCredentials } from "../../../src/config/urlCredentials.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

/**
 * A URL's password or credential-named query value was printed back by the messages that quote a value to
 * copy: the YAML syntax hints (`write redis_url: '…'`) and the one for a value written as a list (`one value,
 * not a list: write url: …`), on stderr, in gateway.out and in the log's `reload refused` line. They show the
 * URL as the other config messages do, `user:[redacted]@` and `api_key=[redacted]`.
 */

const SECRET = "Sup3rS3cretVal";
const webhook =
  "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    secret: abcdefghijklmnop1234\n";

/** The error loading `yaml` (after the webhook section) as config.yaml gives, with the file's path as FILE. */
function refusal(yaml: string): string {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", `${webhook}${yaml}`, 0o600);
  try {
    loadConfig({ home: h.dir, env: {} });
  } catch (err) {
    return (err as Error).message.replaceAll(file, "FILE");
  }
  throw new Error("loaded without an error");
}

const LEFT_OUT = "(its credentials shown as [redacted]: write yours in their place)";

describe("a URL's credentials in a config message that quotes the value back", () => {
  it.each([
    [
      "state.redis_url",
      `state:\n  backend: redis\n  redis_url: [redis://:${SECRET}@h:6379/0]\n`,
      `FILE: state.redis_url: expected a string, got ["redis://:[redacted]@h:6379/0"] — one value, not a list: write redis_url: "redis://:[redacted]@h:6379/0" ${LEFT_OUT}`,
    ],
    [
      "mcp_servers.<name>.url",
      `mcp_servers:\n  gh:\n    url: [https://u:${SECRET}@example.com/mcp]\n`,
      `FILE: mcp_servers.gh.url: expected a string, got ["https://u:[redacted]@example.com/mcp"] — one value, not a list: write url: "https://u:[redacted]@example.com/mcp" ${LEFT_OUT}`,
    ],
    [
      "agent.base_url",
      `agent:\n  provider: openai\n  model: m\n  base_url: ["https://u:${SECRET}@example.com/v1"]\n`,
      `FILE: agent.base_url: expected a string, got ["https://u:[redacted]@example.com/v1"] — one value, not a list: write base_url: "https://u:[redacted]@example.com/v1" ${LEFT_OUT}`,
    ],
    [
      "a credential-named query option",
      `state:\n  backend: redis\n  redis_url: [redis://h:6379/0?password=${SECRET}]\n`,
      `FILE: state.redis_url: expected a string, got ["redis://h:6379/0?password=[redacted]"] — one value, not a list: write redis_url: "redis://h:6379/0?password=[redacted]" ${LEFT_OUT}`,
    ],
  ])("%s written as a list: the value and the fix without them", (_, yaml, expected) => {
    const message = refusal(yaml);
    expect(message).toBe(expected);
    expect(message).not.toContain(SECRET);
  });

  it("a URL without credentials is written back as it is", () => {
    expect(refusal("state:\n  backend: redis\n  redis_url: [redis://h:6379/0]\n")).toBe(
      'FILE: state.redis_url: expected a string, got ["redis://h:6379/0"] — one value, not a list: write redis_url: redis://h:6379/0',
    );
  });

  it.each([
    [
      "text after a quoted value",
      `state:\n  backend: redis\n  redis_url: "redis://:${SECRET}@h:6379/0" x\n`,
      `write redis_url: '"redis://:[redacted]@h:6379/0" x' ${LEFT_OUT}`,
    ],
    [
      'a ": " inside a value',
      `mcp_servers:\n  gh:\n    url: https://example.com/mcp?api_key=${SECRET} x: y\n`,
      `put the value in quotes: url: 'https://example.com/mcp?api_key=[redacted] x: y' ${LEFT_OUT}`,
    ],
    [
      "a value that starts with @",
      `agent:\n  provider: openai\n  model: m\n  base_url: @https://u:${SECRET}@example.com/v1\n`,
      `put the value in quotes: base_url: '@https://u:[redacted]@example.com/v1' ${LEFT_OUT}`,
    ],
  ])("a YAML syntax hint for %s writes the URL back without them", (_, yaml, hint) => {
    const message = refusal(yaml);
    expect(message).toContain(hint);
    expect(message).not.toContain(SECRET);
  });

  it("an MCP server written as a URL with a credential-named query option is not written back", () => {
    const message = refusal(`mcp_servers:\n  gh: https://example.com/mcp?access_token=${SECRET}\n`);
    expect(message).toContain("— a server is a mapping of its keys: write gh: {url: ...}");
    expect(message).not.toContain(SECRET);
  });
});

describe("textWithoutUrlCredentials", () => {
  it("hides each URL's credentials in a line of text, the quotes and brackets around it kept", () => {
    expect(textWithoutUrlCredentials(`"redis://:${SECRET}@h:6379/0" x`)).toBe(
      '"redis://:[redacted]@h:6379/0" x',
    );
    expect(textWithoutUrlCredentials(`[https://u:${SECRET}@e.com/mcp?sig=${SECRET}&a=1]`)).toBe(
      "[https://u:[redacted]@e.com/mcp?sig=[redacted]&a=1]",
    );
    expect(textWithoutUrlCredentials("PR #{number} by {user}: see https://e.com/x?page=2")).toBe(
      "PR #{number} by {user}: see https://e.com/x?page=2",
    );
  });
});
