import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { startupProblems } from "../../../src/gateway/startupProblems.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function load(yaml: string) {
  const h = tempHome();
  home = h;
  h.write("config.yaml", yaml);
  return () => loadConfig({ home: h.dir, env: {} });
}

describe("typos point at the fix", () => {
  it('deliver: slak suggests "slack"', () => {
    const loaded = load(
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      a: {secret: s, deliver: slak}\n",
    )();
    const [problem] = startupProblems(loaded.config, loaded.paths.config);
    expect(problem).toContain(
      'platforms.webhook.routes.a.deliver: unknown target "slak" — did you mean "slack"?',
    );
  });

  it("a target far from every name gets no suggestion, only the list", () => {
    const loaded = load(
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      a: {secret: s, deliver: carrier-pigeon}\n",
    )();
    const [problem] = startupProblems(loaded.config, loaded.paths.config);
    expect(problem).not.toContain("did you mean");
    expect(problem).toContain("use one of log,");
  });

  it("an agent key other frameworks write (temperature, max_retries, max_turns, api_base) says what svc reads", () => {
    expect(load("agent:\n  provider: echo\n  temperature: 0.2\n")).toThrow(
      /agent: unknown key "temperature" — svc sends no sampling settings \(the model's own defaults apply\) — remove it, or set it where the model is served \(see docs\/configuration\.md\)$/m,
    );
    expect(load("agent:\n  provider: echo\n  max_retries: 5\n")).toThrow(
      /agent: unknown key "max_retries" — write retries \(retries of one model call\)/,
    );
    expect(load("agent:\n  provider: echo\n  max_turns: 5\n")).toThrow(
      /agent: unknown key "max_turns" — write max_steps \(model turns per run\)/,
    );
    expect(load("agent:\n  provider: echo\n  api_base: http://127.0.0.1:4000\n")).toThrow(
      /agent: unknown key "api_base" — write base_url/,
    );
    // With a misspelling beside it, each key gets its own hint.
    expect(load("agent:\n  provider: echo\n  temperature: 0.2\n  max_step: 3\n")).toThrow(
      /agent: unknown keys "temperature", "max_step" — temperature: svc sends no sampling settings .*; "max_step": did you mean "max_steps"\?/,
    );
  });

  it("agent.headers (OpenRouter's X-Title, a gateway's own header) and agent.stream say there are no such settings and what to do instead, not to check the spelling", () => {
    const headers =
      /agent: unknown key "headers" — svc sends no request headers of your own: a gateway that takes its key as Authorization: Bearer gets it from api_key; for any other header, put a reverse proxy in front of the endpoint that adds it, and set base_url to the proxy \(see docs\/configuration\.md\)$/m;
    expect(load("agent:\n  provider: echo\n  headers: {X-Title: svc}\n")).toThrow(headers);
    expect(load("agent:\n  provider: echo\n  default_headers: {X-Title: svc}\n")).toThrow(
      /agent: unknown key "default_headers" — svc sends no request headers of your own: /,
    );
    expect(load("agent:\n  provider: echo\n  stream: true\n")).toThrow(
      /agent: unknown key "stream" — svc asks the endpoint for one JSON answer per model turn, never a stream: remove it \(an endpoint that streams all the same is read as well\)/,
    );
  });

  it("an MCP server's sampling: true or elicitation: false gets the mapping to write", () => {
    expect(load("mcp_servers:\n  fs:\n    command: node\n    sampling: true\n")).toThrow(
      /mcp_servers\.fs\.sampling: expected a mapping, got true — sampling is a mapping of its settings: write sampling: \{enabled: true\}$/m,
    );
    expect(load("mcp_servers:\n  fs:\n    command: node\n    elicitation: off\n")).toThrow(
      /mcp_servers\.fs\.elicitation: expected a mapping, got "off" — elicitation is a mapping of its settings: write elicitation: \{enabled: false\}$/m,
    );
  });

  it("a key of Claude Code's or Gemini CLI's oauth mapping says what svc reads instead", () => {
    const entry = (key: string) =>
      `mcp_servers:\n  gh:\n    url: https://x.test/mcp\n    auth: oauth\n    oauth:\n      ${key}\n`;
    expect(load(entry("callbackPort: 8080"))).toThrow(
      /mcp_servers\.gh\.oauth: unknown key "callbackPort" — write redirect_uri: http:\/\/localhost:<port>\/callback \(the callback registered with the client\), or redirect_port: <port> for http:\/\/127\.0\.0\.1:<port>\/callback \(see docs\/mcp-oauth\.md\)/,
    );
    expect(load(entry("authServerMetadataUrl: https://auth.test/.well-known/openid-configuration"))).toThrow(
      /unknown key "authServerMetadataUrl" — svc finds the authorization server from the MCP server's metadata/,
    );
    expect(load(entry("enabled: true"))).toThrow(
      /mcp_servers\.gh\.oauth: unknown key "enabled" — auth: oauth beside oauth turns the login on: remove it/,
    );
  });

  it("a misspelt key of an MCP server entry points to docs/mcp.md", () => {
    expect(load("mcp_servers:\n  fs:\n    command: node\n    argz: [x]\n")).toThrow(
      /mcp_servers\.fs: unknown key "argz" — did you mean "args"\? \(see docs\/mcp\.md\)/,
    );
  });

  it("a key written without its unit (coalesce window, max_wait; max_body) names the key with it", () => {
    const route = (coalesce: string) =>
      `platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      a:\n        secret: s\n        coalesce: {key: n, ${coalesce}}\n`;
    expect(load(route("window: 10"))).toThrow(
      /routes\.a\.coalesce: unknown key "window" — did you mean "window_seconds"\?/,
    );
    expect(load(route("max_wait: 60"))).toThrow(
      /routes\.a\.coalesce: unknown key "max_wait" — did you mean "max_wait_seconds"\?/,
    );
    expect(load("platforms:\n  webhook:\n    max_body: 10\n")).toThrow(
      /platforms\.webhook: unknown key "max_body" — did you mean "max_body_bytes"\?/,
    );
  });

  it("a misspelt key elsewhere still points to docs/configuration.md", () => {
    expect(load("agent:\n  providr: echo\n")).toThrow(/\(see docs\/configuration\.md\)/);
  });

  it("a delivery platform's, tools' and an oauth mapping's key point to the page that lists them", () => {
    // configuration.md covers the webhook adapter, routes, agent, gateway and state only.
    expect(load("platforms:\n  slack: {enabled: true, token: t, chanel: x}\n")).toThrow(
      /platforms\.slack: unknown key "chanel" — check the spelling \(see docs\/delivery-targets\.md\)$/,
    );
    expect(load("tools:\n  web: {max_byte: 5}\n")).toThrow(
      /tools\.web: unknown key "max_byte" — did you mean "max_bytes"\? \(see docs\/agent-tools\.md\)$/,
    );
    expect(load("mcp_servers:\n  a: {url: 'https://x/mcp', auth: oauth, oauth: {bogus: 1}}\n")).toThrow(
      /mcp_servers\.a\.oauth: unknown key "bogus" — check the spelling \(see docs\/mcp-oauth\.md\)$/,
    );
  });
});
