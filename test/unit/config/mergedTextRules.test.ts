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

/** The message of the refusal loading `lines` as config.yaml, without the file's path. */
function refusal(lines: readonly string[]): string {
  try {
    load(lines);
  } catch (err) {
    return (err as Error).message.replaceAll(`${home?.dir}/config.yaml`, "FILE");
  }
  throw new Error("the configuration loaded");
}

const ROUTES = ["platforms:", "  webhook:", "    secret: s", "    routes:"];

/**
 * A route's `prompt`, its `deliver_extra` values and its `coalesce.key` are templates: one a merge key gives is
 * read as a template too, as written in the mapping that takes it, and the messages name where it is written
 * (`deliver_extra.<<.chat_id`, on its line).
 */
describe("template keys through a merge key", () => {
  it("a deliver_extra value cut by a # is refused at its line, inline, by an alias (at the anchor's line, once) and in a merged list", () => {
    const advice =
      "YAML read no value: a # after a space starts a comment, so \"#general\" was dropped — put the template in quotes: chat_id: '#general'";
    const inline = refusal([
      ...ROUTES,
      "      a:",
      "        prompt: x",
      "        deliver: slack",
      "        deliver_extra:",
      "          <<:",
      "            chat_id: #general",
    ]);
    expect(inline).toBe(`FILE: line 10: platforms.webhook.routes.a.deliver_extra.<<.chat_id: ${advice}`);
    const aliased = refusal([
      ...ROUTES,
      "      a:",
      "        prompt: x",
      "        deliver: slack",
      "        deliver_extra:",
      "          <<: &ex",
      "            chat_id: #general",
      "      b:",
      "        prompt: y",
      "        deliver: slack",
      "        deliver_extra:",
      "          <<: *ex",
      "          thread_ts: '1'",
    ]);
    expect(aliased).toBe(`FILE: line 10: platforms.webhook.routes.a.deliver_extra.<<.chat_id: ${advice}`);
    const listed = refusal([
      ...ROUTES,
      "      a:",
      "        prompt: x",
      "        deliver: slack",
      "        deliver_extra: &ids {thread_ts: '1'}",
      "      b:",
      "        prompt: y",
      "        deliver: slack",
      "        deliver_extra:",
      "          <<:",
      "            - *ids",
      "            - chat_id: #general",
    ]);
    expect(listed).toBe(`FILE: line 15: platforms.webhook.routes.b.deliver_extra.<<[1].chat_id: ${advice}`);
  });

  it("a deliver_extra template that keeps text before its cut #{...} is refused with what YAML read", () => {
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<:",
        "            chat_id: chat #{chat.id}",
      ]),
    ).toBe(
      `FILE: line 10: platforms.webhook.routes.a.deliver_extra.<<.chat_id: YAML read only "chat": a # after a space starts a comment, so "#{chat.id}" was dropped — put the template in quotes: chat_id: 'chat #{chat.id}'`,
    );
  });

  it("coalesce.key cut by a # is refused at its line, inline, by an alias and in a merged list", () => {
    const advice =
      "YAML read no value: a # after a space starts a comment, so \"#{number}\" was dropped — put the template in quotes: key: '#{number}'";
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        coalesce:",
        "          <<:",
        "            key: #{number}",
      ]),
    ).toBe(`FILE: line 9: platforms.webhook.routes.a.coalesce.<<.key: ${advice}`);
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        coalesce:",
        "          <<: &co",
        "            key: #{number}",
        "      b:",
        "        prompt: y",
        "        coalesce: {<<: *co, window_seconds: 60}",
      ]),
    ).toBe(`FILE: line 9: platforms.webhook.routes.a.coalesce.<<.key: ${advice}`);
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        coalesce:",
        "          <<:",
        "            - {window_seconds: 60}",
        "            - key: #{number}",
      ]),
    ).toBe(`FILE: line 10: platforms.webhook.routes.a.coalesce.<<[1].key: ${advice}`);
  });

  it("a prompt cut by a # in a merged platforms or routes mapping is refused at its line", () => {
    const advice = `YAML read only "PR": a # after a space starts a comment, so "#{number} opened" was dropped — put the template in quotes: prompt: 'PR #{number} opened'`;
    expect(
      refusal([
        "platforms:",
        "  <<:",
        "    webhook:",
        "      secret: s",
        "      routes:",
        "        a:",
        "          prompt: PR #{number} opened",
      ]),
    ).toBe(`FILE: line 7: platforms.<<.webhook.routes.a.prompt: ${advice}`);
    expect(
      refusal([
        "platforms:",
        "  webhook:",
        "    <<:",
        "      - {secret: s}",
        "      - routes:",
        "          a:",
        "            prompt: PR #{number} opened",
      ]),
    ).toBe(`FILE: line 7: platforms.webhook.<<[1].routes.a.prompt: ${advice}`);
  });

  it("a filter's value cut by a # that a merge key gives is refused once, at its line, inline, by an alias and in a merged list", () => {
    const advice = `YAML read no value: a # after a space starts a comment, so "#general" was dropped — put the value in quotes: equals: '#general'`;
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        filters:",
        "          - <<:",
        "              field: channel",
        "              equals: #general",
      ]),
    ).toBe(`FILE: line 10: platforms.webhook.routes.a.filters[0].<<.equals: ${advice}`);
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        filters:",
        "          - <<: &general",
        "              field: channel",
        "              equals: #general",
        "      b:",
        "        prompt: y",
        "        filters: [{<<: *general}]",
      ]),
    ).toBe(`FILE: line 10: platforms.webhook.routes.a.filters[0].<<.equals: ${advice}`);
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        filters:",
        "          - <<:",
        "              - {field: channel}",
        "              - equals: #general",
      ]),
    ).toBe(`FILE: line 10: platforms.webhook.routes.a.filters[0].<<[1].equals: ${advice}`);
  });

  it("a template written unquoted as {a:b} and merged in gets the advice to quote it, as written directly, not the missing-space refusal", () => {
    const deliverExtra =
      "platforms.webhook.routes.a.deliver_extra.chat_id: expected text (a {template}), a number or true/false — YAML reads a value that starts with { as a mapping: put the template in quotes: chat_id: '{chat:id}'";
    expect(
      refusal([...ROUTES, "      a: {prompt: x, deliver: slack, deliver_extra: {chat_id: {chat:id}}}"]),
    ).toBe(`FILE: ${deliverExtra}`);
    expect(
      refusal([...ROUTES, "      a: {prompt: x, deliver: slack, deliver_extra: {<<: {chat_id: {chat:id}}}}"]),
    ).toBe(`FILE: ${deliverExtra}`);
    const aliased = refusal([
      ...ROUTES,
      "      a: {prompt: x, deliver: slack, deliver_extra: {<<: &ex {chat_id: {chat:id}}}}",
      "      b: {prompt: x, deliver: slack, deliver_extra: {<<: *ex}}",
    ]);
    expect(aliased).toContain(deliverExtra);
    expect(aliased).toContain(deliverExtra.replace("routes.a.", "routes.b."));
    expect(aliased).not.toContain("has no space after its colon");
    expect(
      refusal([
        ...ROUTES,
        "      a: {prompt: x, deliver: slack, deliver_extra: {<<: [{thread_ts: '1'}, {chat_id: {chat:id}}]}}",
      ]),
    ).toBe(`FILE: ${deliverExtra}`);
    expect(refusal([...ROUTES, "      a: {prompt: x, coalesce: {<<: {key: {pr:number}}}}"])).toBe(
      `FILE: platforms.webhook.routes.a.coalesce.key: expected a string, got {"pr:number":null} — YAML reads a value that starts with { as a mapping: put the template in quotes: key: '{pr:number}'`,
    );
  });

  it("a mapping merged into deliver_extra is its settings, not a template: a key without a space after its colon is refused, not dropped", () => {
    expect(
      refusal([...ROUTES, "      a: {prompt: x, deliver: slack, deliver_extra: {<<: {chat_id:x}}}"]),
    ).toContain("platforms.webhook.routes.a.deliver_extra.<<: chat_id:… has no space after its colon");
  });

  // Seen: "… but it is given a single value — put the anchor on a mapping (&name {...}) and merge that": YAML read no
  // value there, the # began a comment.
  it("the value of << under deliver_extra is no template: one cut by a # is refused as a comment, with the alias meant", () => {
    const noValue =
      'the merge key << takes a mapping (its keys are copied in), but YAML read no value: a # after a space starts a comment, so "#ids" was dropped — to merge the mapping an anchor names, write an alias:';
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<: #ids",
        "          chat_id: '1'",
      ]),
    ).toBe(
      `FILE: line 9: platforms.webhook.routes.a.deliver_extra: ${noValue} <<: *ids, with &ids set on the mapping to merge, on a line above this one`,
    );
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: x, deliver: slack, deliver_extra: &ids {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra: {<<: #ids",
        "          , chat_id: '1'}",
      ]),
    ).toBe(
      `FILE: line 9: platforms.webhook.routes.a.deliver_extra: ${noValue} <<: *ids (&ids is set on line 5)`,
    );
  });
});

describe("a merge key with no value", () => {
  // Seen: "… but it is given a single value — put the anchor on a mapping (&name {...}) and merge that": `<<:` with
  // nothing after it is YAML's null, no value given.
  it("<<: with nothing on its line and no block below is refused as a merge key with no value, with the alias to write", () => {
    const noValue =
      "platforms.webhook.routes.a.deliver_extra: the merge key << takes a mapping (its keys are copied in), but it has no value (YAML reads nothing after << as null) — write an alias of the mapping to merge: <<: *name";
    expect(
      refusal([
        ...ROUTES,
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<:",
        "          chat_id: '1'",
      ]),
    ).toBe(
      `FILE: line 9: ${noValue}, with &name set on the mapping to merge, on a line above this one, or remove the << line`,
    );
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: x, deliver: slack, deliver_extra: &ids {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra: {<<: , chat_id: '1'}",
      ]),
    ).toBe(`FILE: line 9: ${noValue} (&ids is set on line 5), or remove the << line`);
  });

  // Seen: "… so \"#\" was dropped — … <<: *name, with &name set on the mapping to merge, on a line above this one" of
  // `<<:    # merge the ids`, though &ids was set above: a comment, no alias meant.
  it("<<: with a comment only is refused as a merge key with no value, naming the anchors set above", () => {
    const noValue =
      "platforms.webhook.routes.a.deliver_extra: the merge key << takes a mapping (its keys are copied in), but it has no value (YAML reads nothing after << as null) — write an alias of the mapping to merge: <<: *name";
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: x, deliver: slack, deliver_extra: &ids {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<:    # merge the ids",
        "          chat_id: '1'",
      ]),
    ).toBe(`FILE: line 10: ${noValue} (&ids is set on line 5), or remove the << line`);
  });

  // Seen: "… so \"##\" was dropped — … write an alias: <<: *#, with &# set on the mapping to merge …" of `<<: ## ids`,
  // and `*---`, `*TODO:`, `*:` of the others, though &ids was set above: comments, no alias meant.
  it("<<: with a comment that begins no anchor's name is refused as a merge key with no value, naming the anchors set above", () => {
    const noValue =
      "platforms.webhook.routes.a.deliver_extra: the merge key << takes a mapping (its keys are copied in), but it has no value (YAML reads nothing after << as null) — write an alias of the mapping to merge: <<: *name";
    for (const comment of ["## ids", "#--- merge ---", "#TODO: fill in", "#: ids"]) {
      expect(
        refusal([
          ...ROUTES,
          "      b: {prompt: x, deliver: slack, deliver_extra: &ids {thread_ts: '1'}}",
          "      a:",
          "        prompt: x",
          "        deliver: slack",
          "        deliver_extra:",
          `          <<: ${comment}`,
          "          chat_id: '1'",
        ]),
        comment,
      ).toBe(`FILE: line 10: ${noValue} (&ids is set on line 5), or remove the << line`);
    }
  });

  // An anchor's name that is no plain word (&a:b, which YAML allows) is still taken as the alias meant.
  it("<<: #name of an anchor set above is taken as its alias, whatever the name", () => {
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: x, deliver: slack, deliver_extra: &a:b {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<: #a:b",
        "          chat_id: '1'",
      ]),
    ).toBe(
      'FILE: line 10: platforms.webhook.routes.a.deliver_extra: the merge key << takes a mapping (its keys are copied in), but YAML read no value: a # after a space starts a comment, so "#a:b" was dropped — to merge the mapping an anchor names, write an alias: <<: *a:b (&a:b is set on line 5)',
    );
  });

  // Seen: "… write an alias: <<: *tok (&tok is set on line 5)" of a scalar's anchor, and "<<: *later (&later is set
  // on line 11)" of one set below, which no alias there can name: neither is offered as the alias meant.
  it("<<: #name of an anchor set on a scalar, or below, is not taken as that anchor's alias", () => {
    const dropped = (name: string) =>
      `FILE: line 10: platforms.webhook.routes.a.deliver_extra: the merge key << takes a mapping (its keys are copied in), but YAML read no value: a # after a space starts a comment, so "#${name}" was dropped — to merge the mapping an anchor names, write an alias: <<: *${name}, with &${name} set on the mapping to merge, on a line above this one`;
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: &tok x, deliver: slack, deliver_extra: &ids {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<: #tok",
        "          chat_id: '1'",
      ]),
    ).toBe(dropped("tok"));
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: x, deliver: slack, deliver_extra: &ids {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<: #later",
        "          chat_id: '1'",
        "      c: {prompt: x, deliver: slack, deliver_extra: &later {thread_ts: '2'}}",
      ]),
    ).toBe(dropped("later"));
    // Not a plain word, and set on no mapping above: a comment, so the merge key has no value.
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: &a:b x, deliver: slack, deliver_extra: &ids {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<: #a:b",
        "          chat_id: '1'",
      ]),
    ).toBe(
      "FILE: line 10: platforms.webhook.routes.a.deliver_extra: the merge key << takes a mapping (its keys are copied in), but it has no value (YAML reads nothing after << as null) — write an alias of the mapping to merge: <<: *name (&ids is set on line 5), or remove the << line",
    );
  });

  // `events: &events [push]` is a list, which no merge key takes: never offered.
  it("names only the anchors set on mappings", () => {
    const noValue =
      "platforms.webhook.routes.a.deliver_extra: the merge key << takes a mapping (its keys are copied in), but it has no value (YAML reads nothing after << as null) — write an alias of the mapping to merge: <<: *name";
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: x, deliver: slack, events: &events [push], deliver_extra: &ids {thread_ts: '1'}}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra:",
        "          <<:",
        "          chat_id: '1'",
      ]),
    ).toBe(`FILE: line 10: ${noValue} (&ids is set on line 5), or remove the << line`);
    expect(
      refusal([
        ...ROUTES,
        "      b: {prompt: x, deliver: slack, events: &events [push]}",
        "      a:",
        "        prompt: x",
        "        deliver: slack",
        "        deliver_extra: {<<: , chat_id: '1'}",
      ]),
    ).toBe(
      `FILE: line 9: ${noValue}, with &name set on the mapping to merge, on a line above this one, or remove the << line`,
    );
  });
});
