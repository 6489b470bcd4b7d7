import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

/** The lines loading `yaml` as config.yaml refuses it with, `.env` holding `dotenv`, the file's path as FILE. */
function refusal(yaml: string, dotenv: string): string[] {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", yaml);
  h.write(".env", dotenv);
  try {
    loadConfig({ home: h.dir, env: {} });
  } catch (err) {
    return (err as Error).message.replaceAll(file, "FILE").split("\n");
  }
  throw new Error("loaded without an error");
}

const NOT_SHOWN = "(the value it gives is not shown)";

/**
 * docs/configuration.md, "What a variable gives is never quoted back": the checks of the schema whose message
 * quotes the value (or writes a fix made from it) say it of the file's text when a `${VAR}` gave the value.
 * Each value below holds SECRET, which no line may show.
 */
describe(`a schema check's message about a value a $\{VAR} gave`, () => {
  it("quotes the file's text, and writes no fix made from the value", () => {
    const lines = refusal(
      [
        "platforms:",
        "  webhook:",
        "    host: $" + "{H}",
        "    routes:",
        "      a:",
        "        secret: s3cret-s3cret",
        "        profile: $" + "{PR}",
        '        coalesce: {key: "$' + '{K}"}',
        '        filters: [{field: "$' + '{F}", equals: x}, {field: a, regex: "$' + '{R}"}]',
        "  email:",
        "    host: $" + "{EH}",
        "agent:",
        "  provider: $" + "{P}",
        "  base_url: $" + "{U}",
        "state:",
        "  redis_key_prefix: $" + "{RP}",
        "",
      ].join("\n"),
      [
        "H=10.9.8.7:8644",
        "PR=x:SECRET-profile",
        "K={SECRET..key}",
        "F=a..SECRET",
        "R=abc(SECRET",
        "EH=smtp.SECRET.example:587",
        "P=sk-SECRET-provider",
        "U=localhost:11434/SECRET",
        "RP=sk:SECRET",
        "",
      ].join("\n"),
    );
    expect(lines).toEqual([
      `FILE: agent.provider: unknown provider "$\{P}" ${NOT_SHOWN} — use one of echo, command, openai, anthropic`,
      "FILE: agent.base_url: no scheme — write http://<host:port/path> (or https://)",
      `FILE: platforms.webhook.host: "$\{H}" ${NOT_SHOWN} includes a port — write the address alone and put the port in platforms.webhook.port (or WEBHOOK_PORT)`,
      `FILE: platforms.webhook.routes.a.profile: "$\{PR}" ${NOT_SHOWN} is no profile name: profile names use letters, digits, "_" and "-" (1-64, starting with a letter or digit)`,
      `FILE: platforms.webhook.routes.a.filters[0].field: "$\{F}" ${NOT_SHOWN} has an empty part between dots, so it never names a value — write a dotted path such as pull_request.user.login`,
      "FILE: platforms.webhook.routes.a.filters[1].regex: not a valid RE2 pattern (error parsing regexp: missing closing ))",
      `FILE: platforms.webhook.routes.a.coalesce.key: a placeholder of "$\{K}" ${NOT_SHOWN} names no payload field, so the key never resolves and every event would run at once — write a dotted path such as pull_request.number, or a template such as {repository.full_name}#{pull_request.number}`,
      `FILE: platforms.email.host: "$\{EH}" ${NOT_SHOWN} includes a port — write the address alone and put the port in platforms.email.port`,
      `FILE: state.redis_key_prefix: got "$\{RP}" ${NOT_SHOWN} — a prefix is letters, digits, '.', '_' and '-' (svc adds the ":" after it): write a prefix of your own, or leave the key out for svc`,
    ]);
    expect(lines.join("\n")).not.toContain("SECRET");
  });

  it("a service's name the provider speaks for is not written back either; the provider to write is", () => {
    const [line] = refusal("agent:\n  provider: $" + "{P}\n", "P=ollama\n");
    expect(line).toBe(
      `FILE: agent.provider: unknown provider "$\{P}" ${NOT_SHOWN} — write provider: openai and base_url: http://127.0.0.1:11434/v1 (that service serves the OpenAI-compatible Chat Completions API there); use one of echo, command, openai, anthropic`,
    );
  });

  it("a platform's base_url, and an MCP server's duration (a key checked at load)", () => {
    const lines = refusal(
      [
        "platforms:",
        "  mattermost:",
        "    base_url: $" + "{MM}",
        "  slack:",
        "    base_url: $" + "{SL}",
        "mcp_servers:",
        '  x: {command: foo, timeout: "$' + '{TO}"}',
        "",
      ].join("\n"),
      "MM=SECRET.example:8065\nSL=https://SECRET.example/api\nTO=SECRET30s\n",
    );
    expect(lines).toEqual([
      "FILE: platforms.slack.base_url: ends in /api, a path svc adds to every request itself — write the base without it",
      "FILE: platforms.mattermost.base_url: no scheme — write http://<host:port> (or https://)",
      `FILE: mcp_servers.x.timeout: expected seconds, got "$\{TO}" ${NOT_SHOWN}`,
    ]);
  });

  it("a value written in the file itself is quoted, and its fix written, as before", () => {
    expect(refusal("agent:\n  provider: gpt\n", "")).toEqual([
      'FILE: agent.provider: unknown provider "gpt" — use one of echo, command, openai, anthropic',
    ]);
    expect(refusal("platforms:\n  webhook:\n    host: 10.9.8.7:8644\n", "")).toEqual([
      'FILE: platforms.webhook.host: "10.9.8.7:8644" includes a port — write 10.9.8.7 and put the port in platforms.webhook.port (or WEBHOOK_PORT)',
    ]);
  });
});
