import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { configSchema } from "../../../src/config/schema.js";
import { unusedSettingWarnings } from "../../../src/config/unusedSettings.js";
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
  return refusalOf(`${webhook}${yaml}`);
}

/** The error loading `text` as the whole of config.yaml gives, with the file's path as FILE. */
function refusalOf(text: string): string {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", text, 0o600);
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

/**
 * A URL YAML read as a mapping's key (`url: {https://u:pw@h/mcp}`, or `redis_url:` with the URL and a `: `
 * on the next line) was quoted with its password in the "got …" part, as was one written as an unknown key
 * or as a server's name; `redis_key_prefix: <a redis URL>` quoted it and wrote the password into the
 * prefix it suggested; other messages quoted the value as written.
 */
describe("a URL's credentials in a key, or in a value other messages quote", () => {
  it.each([
    [
      "a URL read as the key of the mapping a value became",
      `mcp_servers:\n  a:\n    url: {https://u:${SECRET}@h/mcp}\n`,
      `FILE: mcp_servers.a.url: expected a string, got {"https://u:[redacted]@h/mcp":null} — YAML reads a value that starts with { as a mapping: put the template in quotes: url: '{https://u:[redacted]@h/mcp}' ${LEFT_OUT}`,
    ],
    [
      "a URL with a ': ' after it on the line below its key",
      `state:\n  redis_url:\n    redis://:${SECRET}@h:6379/0: 1\n`,
      `FILE: state.redis_url: expected a string, got {"redis://:[redacted]@h:6379/0":1}`,
    ],
    [
      "a URL written as an unknown key",
      `state:\n  redis://:${SECRET}@h:6379/0: 1\n`,
      `FILE: state: unknown key "redis://:[redacted]@h:6379/0" — check the spelling (see docs/configuration.md)`,
    ],
    [
      "a URL written as a server's name",
      `mcp_servers:\n  https://u:${SECRET}@h/mcp: {}\n`,
      "FILE: mcp_servers.https://u:[redacted]@h/mcp: needs command (a local stdio server) or url (a remote server)",
    ],
    [
      "a URL in braces written as a key",
      `mcp_servers:\n  {https://u:${SECRET}@h/mcp}: x\n`,
      `FILE: line 7: mcp_servers: the key {https://u:[redacted]@h/mcp} is a mapping to YAML, not a name — write the name alone, without the { }: https://u:[redacted]@h/mcp: ${LEFT_OUT}`,
    ],
    [
      "a redis URL written as redis_key_prefix: no prefix is made from it",
      `state:\n  redis_key_prefix: redis://:${SECRET}@h:6379/0\n`,
      `FILE: state.redis_key_prefix: got "redis://:[redacted]@h:6379/0", which holds ":" — a prefix is letters, digits, '.', '_' and '-' (svc adds the ":" after it): write a prefix of your own, or leave the key out for svc (none is made from this value: it holds a credential); a redis:// URL goes in redis_url`,
    ],
    [
      "a credential-named query option in redis_key_prefix",
      `state:\n  redis_key_prefix: "h/0?password=${SECRET}"\n`,
      `FILE: state.redis_key_prefix: got "h/0?password=[redacted]", which holds "/" — a prefix is letters, digits, '.', '_' and '-' (svc adds the ":" after it): write a prefix of your own, or leave the key out for svc (none is made from this value: it holds a credential)`,
    ],
    [
      "a URL as the webhook's host: the address after the @ is the one to write",
      `    extra:\n      host: https://u:${SECRET}@example.com:8443/x\n`,
      `FILE: platforms.webhook.extra.host: "https://u:[redacted]@example.com:8443/x" is a URL — write the address only (e.g. example.com)`,
    ],
    [
      "a URL as the agent's provider",
      `agent:\n  provider: https://u:${SECRET}@h/v1\n`,
      `FILE: agent.provider: unknown provider "https://u:[redacted]@h/v1" — use one of echo, command, openai, anthropic`,
    ],
  ])("%s", (_, yaml, expected) => {
    const message = refusal(yaml);
    expect(message).toBe(expected);
    expect(message).not.toContain(SECRET);
  });

  it("a prefix without credentials is still written back with '-' for what it may not hold", () => {
    expect(refusal("state:\n  redis_key_prefix: svc:prod\n")).toContain("write svc-prod");
  });

  it.each([
    [
      "an MCP server's value its schema quotes (ssl_verify)",
      `mcp_servers:\n  a:\n    url: https://h/mcp\n    ssl_verify: [https://u:${SECRET}@h/ca.pem]\n`,
      `got ["https://u:[redacted]@h/ca.pem"]`,
    ],
    [
      "a filter group that is no list",
      `    routes:\n      r:\n        filters: [{all: "https://h/x?token=${SECRET}"}]\n`,
      `expected a list of filters, got "https://h/x?token=[redacted]"`,
    ],
    [
      "coalesce written as its key",
      `    routes:\n      r:\n        coalesce: "https://u:${SECRET}@h/{n}"\n`,
      `write coalesce: {key: "https://u:[redacted]@h/{n}"} ${LEFT_OUT}`,
    ],
    [
      "deliver_extra written as key=value",
      `    routes:\n      r:\n        deliver_extra: [url=https://h/x?token=${SECRET}]\n`,
      `deliver_extra maps each key to its value: write deliver_extra: {url: "https://h/x?token=[redacted]"} ${LEFT_OUT}`,
    ],
  ])("%s", (_, yaml, expected) => {
    const message = refusal(yaml);
    expect(message).toContain(expected);
    expect(message).not.toContain(SECRET);
  });

  it("a config.yaml that is one URL", () => {
    expect(refusalOf(`redis://:${SECRET}@h:6379/0\n`)).toBe(
      'FILE: the top level must be a mapping of sections (platforms:, agent:, gateway:, mcp_servers:), got "redis://:[redacted]@h:6379/0"',
    );
  });

  it("an MCP server's trust written as a mapping: kept as written, warned about without the password", () => {
    const config = configSchema.parse({
      mcp_servers: { a: { command: "node", trust: { [`https://u:${SECRET}@h`]: 1 } } },
    });
    expect(config.mcp_servers.a?.trust).toBe(`{"https://u:${SECRET}@h":1}`);
    const [warning] = unusedSettingWarnings(config, "FILE");
    expect(warning).toContain('trust: "{\\"https://u:[redacted]@h\\":1}" is neither full nor untrusted');
    expect(warning).not.toContain(SECRET);
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
