import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * The values svc keeps as the text written (ids, an MCP server's args, env, headers, client_cert and tool
 * names) are kept so when a merge key gives them: a merged key's rule is the one of the mapping that takes
 * it, whether the mapping merged is written under `<<` (inline) or named by an alias (`<<: *a`), and in a
 * merged list (`<<: [*a, {...}]`) too.
 */

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function load(lines: readonly string[]) {
  home = tempHome();
  home.write("config.yaml", `${lines.join("\n")}\n`);
  return loadConfig({ home: home.dir, env: {} }).config;
}

describe("text rules through a merge key", () => {
  it("deliver_extra: a number merged in keeps the text written (thread_ts, chat_id), inline, by an alias and in a list", () => {
    const routes = load([
      "platforms:",
      "  webhook:",
      "    secret: s",
      "    routes:",
      "      a: {prompt: x, deliver: slack, deliver_extra: {<<: &ts {thread_ts: 1700000000.000100}, chat_id: 42}}",
      "      b: {prompt: x, deliver: slack, deliver_extra: {<<: *ts, chat_id: 007}}",
      "      c: {prompt: x, deliver: slack, deliver_extra: {<<: [*ts, {chat_id: 1.50}]}}",
    ]).platforms.webhook.routes;
    expect(routes.a?.deliver_extra).toEqual({ chat_id: "42", thread_ts: "1700000000.000100" });
    expect(routes.b?.deliver_extra).toEqual({ chat_id: "007", thread_ts: "1700000000.000100" });
    expect(routes.c?.deliver_extra).toEqual({ thread_ts: "1700000000.000100", chat_id: "1.50" });
  });

  it("a platform's ids merged in keep the text written, as written beside them (home_channel 0042, phone_number_id, sms from)", () => {
    const { platforms } = load([
      "platforms:",
      "  slack: {enabled: true, token: t, home_channel: 0042}",
      "  telegram: {enabled: true, <<: &ids {home_channel: 0042}, token: t}",
      "  discord: {enabled: true, <<: *ids, token: t}",
      "  whatsapp: {enabled: true, token: t, <<: {phone_number_id: 0123456789}}",
      "  sms: {enabled: true, account_sid: AC1, auth_token: t, <<: [{from: +15550001111}, {home_channel: +15552223333}]}",
      "  webhook:",
      "    secret: s",
    ]);
    expect(platforms.slack?.home_channel).toBe("0042");
    expect(platforms.telegram?.home_channel).toBe("0042");
    expect(platforms.discord?.home_channel).toBe("0042");
    expect(platforms.whatsapp?.phone_number_id).toBe("0123456789");
    expect(platforms.sms).toMatchObject({ from: "+15550001111", home_channel: "+15552223333" });
  });

  it("an MCP server's args, env, headers and client_cert merged in keep the text written, inline and by an alias", () => {
    const servers = load([
      "mcp_servers:",
      "  one: {<<: &run {command: py, args: [--python, 3.10, ~], env: {UMASK: 0755}}}",
      "  two: {<<: *run}",
      "  three: {command: py, env: {<<: {UMASK: 0755}, PYTHON_VERSION: 3.10}}",
      "  web: {<<: &web {url: https://mcp.example/mcp, headers: {X-Version: 1.0}, client_cert: [/c.pem, /k.pem, 0123]}}",
      "  web2: {<<: [*web, {timeout: 30}]}",
    ]).mcp_servers;
    for (const name of ["one", "two"]) {
      expect(servers[name]?.args).toEqual(["--python", "3.10", "~"]);
      expect(servers[name]?.env).toEqual({ UMASK: "0755" });
    }
    expect(servers.three?.env).toEqual({ UMASK: "0755", PYTHON_VERSION: "3.10" });
    for (const name of ["web", "web2"]) {
      expect(servers[name]?.headers).toEqual({ "X-Version": "1.0" });
      expect(servers[name]?.client_cert).toEqual(["/c.pem", "/k.pem", "0123"]);
    }
  });

  it("an MCP server's tools.include and exclude merged in name the tools by their text: include: Null stays an allowlist", () => {
    const servers = load([
      "mcp_servers:",
      "  one: {<<: &srv {command: x, tools: {include: Null}}}",
      "  two: {<<: *srv}",
      "  three: {command: x, tools: {<<: {include: [3.10, True], exclude: 7}}}",
      "  four: {command: x, tools: {<<: [{exclude: [Null, 2024]}]}}",
    ]).mcp_servers;
    expect(servers.one?.tools.include).toEqual(["Null"]);
    expect(servers.two?.tools.include).toEqual(["Null"]);
    expect(servers.three?.tools).toMatchObject({ include: ["3.10", "True"], exclude: ["7"] });
    expect(servers.four?.tools.exclude).toEqual(["Null", "2024"]);
  });

  it("a whole section merged (platforms, mcp_servers) is read by the rules of the keys it gives", () => {
    const config = load([
      "platforms:",
      "  <<: {telegram: {enabled: true, token: t, home_channel: 0042}}",
      "  webhook:",
      "    secret: s",
      "mcp_servers:",
      "  <<: {one: {command: x, args: [3.10], tools: {include: Null}}}",
    ]);
    expect(config.platforms.telegram?.home_channel).toBe("0042");
    expect(config.mcp_servers.one?.args).toEqual(["3.10"]);
    expect(config.mcp_servers.one?.tools.include).toEqual(["Null"]);
  });
});

describe("a single value merged where ids are read", () => {
  it("is refused at the line of its <<, naming the alias, as elsewhere (not at the anchor's line)", () => {
    expect(() =>
      load([
        "platforms:",
        "  webhook:",
        "    secret: s",
        "    routes:",
        "      a: {prompt: x, deliver: slack, deliver_extra: {chat_id: &c 42}}",
        "      b: {prompt: x, deliver: slack, deliver_extra: {<<: *c}}",
      ]),
    ).toThrow(
      "line 6: platforms.webhook.routes.b.deliver_extra: the merge key << takes a mapping (its keys are copied in), but *c is a single value",
    );
  });
});
