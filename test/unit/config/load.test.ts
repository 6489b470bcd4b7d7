import { mkdirSync, rmdirSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { routeTable } from "../../../src/actors/routes.js";
import { howToEnableWebhook, loadConfig } from "../../../src/config/load.js";
import { restartOnlyChanges } from "../../../src/config/restartOnly.js";
import { secretCharacterWarnings } from "../../../src/config/secretWarnings.js";
import { unusedSettingWarnings } from "../../../src/config/unusedSettings.js";
import { webhookStartupProblems } from "../../../src/config/validate.js";
import { toolsetWarnings } from "../../../src/gateway/routeWarnings.js";
import { startupProblems } from "../../../src/gateway/startupProblems.js";
import { parseSubscription } from "../../../src/io/stores/subscriptions.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

function load(yaml: string | undefined, env: Record<string, string> = {}, dotenv?: string) {
  home = tempHome();
  if (yaml !== undefined) home.write("config.yaml", yaml);
  if (dotenv !== undefined) home.write(".env", dotenv);
  return loadConfig({ home: home.dir, env });
}

/** The error loading `yaml` throws (undefined when it loads). */
function loadFailure(yaml: string): Error | undefined {
  try {
    load(yaml);
  } catch (err) {
    return err as Error;
  }
  return undefined;
}

describe("config loading (spec 2.1)", () => {
  it("uses the embedded default when there is no config file", () => {
    const { config, fromFile } = load(undefined);
    expect(fromFile).toBe(false);
    expect(config.platforms.webhook).toMatchObject({ enabled: true, host: "127.0.0.1", port: 8644 });
    expect(config.agent.provider).toBe("echo");
  });

  it("applies the spec defaults to platforms.webhook", () => {
    const { config } = load("platforms:\n  webhook:\n    enabled: true\n");
    expect(config.platforms.webhook).toMatchObject({
      host: "0.0.0.0",
      port: 8644,
      rate_limit: 30,
      max_body_bytes: 1048576,
      routes: {},
    });
  });

  it("lets the extra mapping win over direct keys", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    port: 9000\n    rate_limit: 5\n    extra:\n      port: 9100\n",
    );
    expect(config.platforms.webhook.port).toBe(9100);
    expect(config.platforms.webhook.rate_limit).toBe(5);
  });

  it("routes written both directly and under extra merge by name; the extra one wins a shared name", () => {
    const yaml = (direct: string, extra: string) =>
      `platforms:\n  webhook:\n    secret: s\n    routes:\n${direct}    extra:\n      routes:\n${extra}`;
    const { config } = load(
      yaml(
        "      direct_only: {prompt: d}\n      both: {prompt: direct}\n",
        "        extra_only: {prompt: e}\n        both: {prompt: extra}\n",
      ),
    );
    const routes = config.platforms.webhook.routes;
    expect(Object.keys(routes).sort()).toEqual(["both", "direct_only", "extra_only"]);
    expect(routes.both?.prompt).toBe("extra");
    expect(routes.direct_only?.prompt).toBe("d");
    // Each problem is reported where its route was written.
    expect(() => load(yaml("      a: {evnts: [push]}\n", "        b: {events: push}\n"))).toThrow(
      /platforms\.webhook\.routes\.a: unknown key "evnts"[^\n]*\n[^\n]*platforms\.webhook\.extra\.routes\.b\.events: expected a list/,
    );
  });

  it("reads WEBHOOK_ENABLED, WEBHOOK_PORT and WEBHOOK_SECRET from the environment and from .env", () => {
    const fromEnv = load("platforms: {}\n", {
      WEBHOOK_ENABLED: "true",
      WEBHOOK_PORT: "9001",
      WEBHOOK_SECRET: "s3",
    });
    expect(fromEnv.config.platforms.webhook).toMatchObject({ enabled: true, port: 9001, secret: "s3" });
    home.cleanup();
    const fromDotenv = load(
      "platforms: {}\n",
      {},
      "WEBHOOK_ENABLED=1\nWEBHOOK_PORT=9002\nWEBHOOK_SECRET=s4\n",
    );
    expect(fromDotenv.config.platforms.webhook).toMatchObject({ enabled: true, port: 9002, secret: "s4" });
  });

  it("WEBHOOK_* precedence: the environment, then .env, then platforms.webhook.extra, then the key written directly", () => {
    const yaml = (extra: string) =>
      `platforms:\n  webhook:\n    enabled: false\n    port: 9000\n    secret: direct\n${extra}`;
    const both = "    extra:\n      enabled: false\n      port: 9100\n      secret: extra\n";
    const dotenv = "WEBHOOK_ENABLED=true\nWEBHOOK_PORT=9200\nWEBHOOK_SECRET=dotenv\n";
    const env = { WEBHOOK_ENABLED: "false", WEBHOOK_PORT: "9300", WEBHOOK_SECRET: "environment" };
    const webhook = (extra: string, e: Record<string, string>, d?: string) => {
      const { config } = load(yaml(extra), e, d);
      home.cleanup();
      const { enabled, port, secret } = config.platforms.webhook;
      return { enabled, port, secret };
    };
    expect(webhook("", {})).toEqual({ enabled: false, port: 9000, secret: "direct" });
    expect(webhook(both, {})).toEqual({ enabled: false, port: 9100, secret: "extra" });
    expect(webhook(both, {}, dotenv)).toEqual({ enabled: true, port: 9200, secret: "dotenv" });
    expect(webhook(both, env, dotenv)).toEqual({ enabled: false, port: 9300, secret: "environment" });
    // One variable overrides its own key only; an empty one counts as unset.
    expect(webhook(both, { WEBHOOK_PORT: "9400", WEBHOOK_SECRET: "" })).toEqual({
      enabled: false,
      port: 9400,
      secret: "extra",
    });
  });

  it("the advice to turn the adapter on names the key that turned it off: enabled under extra when extra's wins", () => {
    // enabled: true written directly, and extra's false wins: "enabled: true" is in the file already.
    const underExtra = load(
      "platforms:\n  webhook:\n    enabled: true\n    extra:\n      enabled: false\n    routes: {a: {secret: x}}\n",
    );
    expect(underExtra.enabledFrom).toBe(`${underExtra.paths.config}: platforms.webhook.extra.enabled`);
    expect(howToEnableWebhook(underExtra)).toMatch(
      /, or enabled: true under platforms\.webhook\.extra in the file$/,
    );
    home.cleanup();
    const direct = load("platforms:\n  webhook:\n    enabled: false\n");
    expect(howToEnableWebhook(direct)).toMatch(/, or enabled: true in the file$/);
  });

  it(".env as a shell reads it: export prefixes, quotes, comments; a # inside an unquoted value is part of it", () => {
    const dotenv = [
      "# the webhook adapter",
      "export WEBHOOK_ENABLED=true   # on",
      'WEBHOOK_PORT="9003"',
      "WEBHOOK_SECRET=abc#def",
      "GH_SECRET=x # a comment after a space",
      "HASHED='quoted#kept'",
      "TWICE=first#one",
      "TWICE=second",
      "",
    ].join("\r\n");
    const { config } = load(
      "platforms:\n  webhook:\n    routes:\n      a: {secret: '${GH_SECRET}'}\n      b: {secret: '${HASHED}'}\n      c: {secret: '${TWICE}'}\n",
      {},
      dotenv,
    );
    expect(config.platforms.webhook).toMatchObject({ enabled: true, port: 9003, secret: "abc#def" });
    expect(config.platforms.webhook.routes.a?.secret).toBe("x");
    expect(config.platforms.webhook.routes.b?.secret).toBe("quoted#kept");
    expect(config.platforms.webhook.routes.c?.secret).toBe("second");
  });

  it("renders ${VAR} from .env in non-MCP sections", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    routes:\n      gh:\n        secret: ${GH_SECRET}\n",
      {},
      "GH_SECRET=from-dotenv\n",
    );
    expect(config.platforms.webhook.routes.gh?.secret).toBe("from-dotenv");
  });

  it("names the file, the key path and the problem for a bad value", () => {
    expect(() => load("platforms:\n  webhook:\n    port: soon\n")).toThrow(
      /config\.yaml: platforms\.webhook\.port: expected a number.*got "soon"/,
    );
  });

  it("refuses a route profile that is not a profile name (its runs could never find the profile's directory)", () => {
    for (const profile of ["my team", "../work", "ü", "-x"]) {
      expect(() =>
        load(`platforms:\n  webhook:\n    routes:\n      gh:\n        profile: "${profile}"\n`),
      ).toThrow(/platforms\.webhook\.routes\.gh\.profile: .*letters, digits, "_" and "-"/);
    }
    expect(
      load("platforms:\n  webhook:\n    routes:\n      gh:\n        profile: Work_2-b\n").config.platforms
        .webhook.routes.gh?.profile,
    ).toBe("Work_2-b");
  });

  it("refuses an MCP server's oauth.redirect_uri with a fragment when the file is loaded", () => {
    expect(() =>
      load(
        'mcp_servers:\n  s:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n    oauth:\n      redirect_uri: "http://127.0.0.1:8995/cb#x"\n',
      ),
    ).toThrow("mcp_servers.s.oauth.redirect_uri: a redirect URI must not have a fragment (#...) — remove it");
  });

  it("refuses an oauth.redirect_uri the loopback listener cannot receive, or naming another port than redirect_port, when the file is loaded", () => {
    const oauth = (lines: string) =>
      `mcp_servers:\n  s:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n    oauth:\n${lines}`;
    expect(() => load(oauth('      redirect_uri: "https://app.example.com/callback"\n'))).toThrow(
      "mcp_servers.s.oauth.redirect_uri: must be http:// on 127.0.0.1, localhost or [::1] (svc receives the redirect on a loopback listener)",
    );
    expect(() => load(oauth('      redirect_uri: "callback"\n'))).toThrow(
      "mcp_servers.s.oauth.redirect_uri: is not a URL — use http://127.0.0.1:<port>/callback",
    );
    expect(() =>
      load(oauth('      redirect_uri: "http://localhost:8995/cb"\n      redirect_port: 8996\n')),
    ).toThrow(
      "mcp_servers.s.oauth.redirect_port: 8996, but oauth.redirect_uri names port 8995 — set only one of them",
    );
    expect(() => load(oauth('      redirect_uri: "http://localhost:0/callback"\n'))).toThrow(
      "mcp_servers.s.oauth.redirect_uri: names port 0, which no redirect can reach — write the port the client's callback is registered with, or leave the port out (http://127.0.0.1/callback) to listen on a free one",
    );
    // A port-less redirect_uri takes redirect_port; a matching pair and [::1] are fine.
    expect(() =>
      load(oauth('      redirect_uri: "http://localhost/cb"\n      redirect_port: 8996\n')),
    ).not.toThrow();
    expect(() =>
      load(oauth('      redirect_uri: "http://[::1]:8995/cb"\n      redirect_port: 8995\n')),
    ).not.toThrow();
  });

  it("refuses an oauth.client_metadata_url breaking the document URL rules when the file is loaded", () => {
    const entry = (url: string) =>
      `mcp_servers:\n  s:\n    url: http://127.0.0.1:9/mcp\n    auth: oauth\n    oauth:\n      client_metadata_url: "${url}"\n`;
    for (const [url, problem] of [
      ["http://app.example.com/client.json", "must use https"],
      ["https://app.example.com", "must have a path"],
      ["https://me:pw@app.example.com/client.json", "must not contain userinfo"],
      ["https://app.example.com/client.json#x", "must not contain a fragment"],
      ["https://app.example.com/a/../client.json", "must not contain . or .. segments"],
    ]) {
      expect(() => load(entry(url as string))).toThrow(
        `mcp_servers.s.oauth.client_metadata_url: ${problem} (a client metadata document URL is https`,
      );
    }
    // The password of a refused URL is never quoted back.
    expect(() => load(entry("https://me:pw-123456@app.example.com/c.json"))).not.toThrow(/pw-123456/);
    // A valid URL, and one a ${VAR} builds (checked when a login renders it), load.
    expect(() => load(entry("https://app.example.com/oauth/client.json"))).not.toThrow();
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(() => load(entry("https://${CIMD_HOST}/client.json"))).not.toThrow();
  });

  it("rejects unknown route keys by name", () => {
    expect(() => load("platforms:\n  webhook:\n    routes:\n      gh:\n        evnts: [push]\n")).toThrow(
      /platforms\.webhook\.routes\.gh: unknown key "evnts"/,
    );
  });

  it("suggests the key a misspelt one meant, at its own level (also under extra and in the subscription store)", () => {
    let message = "";
    try {
      load(
        "gateway:\n  multiplex_profile: true\nplatforms:\n  webhook:\n    prot: 1\n    extra:\n      rate_limt: 3\n    routes:\n      gh:\n        evnts: [push]\n        zzz: 1\n        coalesce: {key: a, windw_seconds: 3}\n",
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'gateway: unknown key "multiplex_profile" — did you mean "multiplex_profiles"?',
    );
    expect(message).toContain('platforms.webhook: unknown key "prot" — did you mean "port"?');
    expect(message).toContain(
      'platforms.webhook.extra: unknown key "rate_limt" — did you mean "rate_limit"?',
    );
    expect(message).toContain(
      'platforms.webhook.routes.gh: unknown keys "evnts", "zzz" — did you mean "events" for "evnts"?',
    );
    expect(message).toContain(
      'routes.gh.coalesce: unknown key "windw_seconds" — did you mean "window_seconds"?',
    );
    const stored = parseSubscription("subs.json", "gh", { secret: "s", colaesce: { key: "a" } });
    expect(stored.ok).toBe(false);
    expect(stored.ok ? "" : stored.problems.join("\n")).toContain(
      'subs.json: gh: unknown key "colaesce" — did you mean "coalesce"?',
    );
  });

  it("refuses a coalesce key of spaces only, like an empty one: it names no field and would never resolve", () => {
    for (const key of ["''", "'   '"]) {
      expect(() =>
        load(`platforms:\n  webhook:\n    routes:\n      gh:\n        coalesce: {key: ${key}}\n`),
      ).toThrow(
        "routes.gh.coalesce.key: empty — it names no field, so every event would run at once: set it to the payload path that names the entity (pull_request.number) or a {template}",
      );
    }
    const stored = parseSubscription("subs.json", "gh", { secret: "s", coalesce: { key: " " } });
    expect(stored.ok).toBe(false);
  });

  it("a coalesce key with nothing under it in config.yaml (its value commented out) is absent: the default applies", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    secret: s\n    routes:\n      gh:\n        coalesce:\n          key: pull_request.number\n          window_seconds:   # 30\n          max_wait_seconds:\n",
    );
    expect(config.platforms.webhook.routes.gh?.coalesce).toEqual({
      key: "pull_request.number",
      window_seconds: 30,
      max_wait_seconds: 300,
    });
  });

  it("a deliver_extra key with nothing under it in config.yaml (its value commented out) is absent, as in a subscription record", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    secret: s\n    routes:\n      gh:\n        deliver: telegram\n        deliver_extra:\n          chat_id: '-100123'\n          message_thread_id:   # 17\n",
    );
    expect(config.platforms.webhook.routes.gh?.deliver_extra).toEqual({ chat_id: "-100123" });
  });

  it("a subscription record's null inside coalesce or deliver_extra is absent, as a null field is (the default applies)", () => {
    const stored = parseSubscription("subs.json", "gh", {
      secret: "s",
      coalesce: { key: "pull_request.number", window_seconds: null, max_wait_seconds: null },
      deliver: "telegram",
      deliver_extra: { chat_id: "-100200300", thread_id: null },
    });
    expect(stored.ok ? [] : stored.problems).toEqual([]);
    expect(stored.ok && stored.value.coalesce).toEqual({
      key: "pull_request.number",
      window_seconds: 30,
      max_wait_seconds: 300,
    });
    expect(stored.ok && stored.value.deliver_extra).toEqual({ chat_id: "-100200300" });
    // A null key is a missing one: refused as such.
    const keyless = parseSubscription("subs.json", "gh", { secret: "s", coalesce: { key: null } });
    expect(keyless.ok ? "" : keyless.problems.join("\n")).toContain("gh.coalesce.key: missing");
  });

  it("a route's profile: ${PROFILE} that nothing sets is named as not set (a store record's is only an invalid name)", () => {
    expect(() =>
      load("platforms:\n  webhook:\n    secret: s\n    routes:\n      gh:\n        profile: ${PROFILE}\n"),
    ).toThrow(
      /config\.yaml: platforms\.webhook\.routes\.gh\.profile: \$\{PROFILE\} is not set — set PROFILE in \/\S+\/\.env or the environment$/,
    );
    expect(
      load("platforms:\n  webhook:\n    secret: s\n    routes:\n      gh:\n        profile: ${PROFILE}\n", {
        PROFILE: "work",
      }).config.platforms.webhook.routes.gh?.profile,
    ).toBe("work");
    const stored = parseSubscription("subs.json", "gh", { secret: "s", profile: "${PROFILE}" });
    expect(stored.ok).toBe(false);
    expect(stored.ok ? [] : stored.problems).toEqual([
      'subs.json: gh.profile: profile names use letters, digits, "_" and "-" (1-64, starting with a letter or digit)',
    ]);
  });

  it("refuses {__raw__} as a coalesce key: a prompt's whole payload is no field to group by, so it would never resolve", () => {
    for (const key of ["'{__raw__}'", "__raw__", "'{repository.full_name}#{__raw__}'"]) {
      expect(() =>
        load(`platforms:\n  webhook:\n    routes:\n      gh:\n        coalesce: {key: ${key}}\n`),
      ).toThrow(
        "routes.gh.coalesce.key: {__raw__} is the whole payload in a prompt, not a field a key can group by",
      );
    }
    const stored = parseSubscription("subs.json", "gh", { secret: "s", coalesce: { key: "{__raw__}" } });
    expect(stored.ok).toBe(false);
  });

  it("refuses a coalesce key with a brace without its partner: {pr.number groups every event in one, pr.number} none", () => {
    const route = (key: string) =>
      `platforms:\n  webhook:\n    routes:\n      gh:\n        coalesce: {key: ${key}}\n`;
    for (const key of ["'{pull_request.number'", "'{repository.full_name}#{pull_request.number'", "'{{a}'"])
      expect(() => load(route(key))).toThrow(
        'routes.gh.coalesce.key: a "{" without its closing "}": the key is read as constant text, so every event of the route would share one group',
      );
    for (const key of ["'pull_request.number}'", "'{a}}'", "'{a}#b}'"])
      expect(() => load(route(key))).toThrow('routes.gh.coalesce.key: a "}" without its opening "{"');
    // Paired braces around a placeholder render as text: {{repo}} still groups per repo.
    for (const key of ["'{{repository.full_name}}'", "'{}'", "'{a}#{b}'"])
      expect(() => load(route(key))).not.toThrow(/coalesce/);
    expect(
      parseSubscription("subs.json", "gh", { secret: "s", coalesce: { key: "{pull_request.number" } }).ok,
    ).toBe(false);
  });

  it("refuses a coalesce key with a path that names no field ({ }, a..b, {repo.}): it would never resolve", () => {
    for (const [key, named] of [
      ["'{ }'", "an empty placeholder"],
      ["a..b", '"a..b"'],
      ["'{repository.full_name}#{pull_request.}'", '"pull_request."'],
      ["'.number'", '".number"'],
    ]) {
      expect(() =>
        load(`platforms:\n  webhook:\n    routes:\n      gh:\n        coalesce: {key: ${key}}\n`),
      ).toThrow(`routes.gh.coalesce.key: ${named} names no payload field, so the key never resolves`);
    }
    for (const key of ["pull_request.number", "'{repository.full_name}#{ pull_request.number }'", "'{}'"])
      expect(() =>
        load(`platforms:\n  webhook:\n    routes:\n      gh:\n        coalesce: {key: ${key}}\n`),
      ).not.toThrow(/coalesce/);
    const stored = parseSubscription("subs.json", "gh", { secret: "s", coalesce: { key: "{a..b}" } });
    expect(stored.ok).toBe(false);
  });

  it("rejects a filter with two operators", () => {
    expect(() =>
      load(
        "platforms:\n  webhook:\n    routes:\n      gh:\n        filters:\n          - {field: a, equals: 1, in: [1]}\n",
      ),
    ).toThrow(
      /routes\.gh\.filters\[0\]: a filter needs exactly one operator, this one has equals and in — write each as its own filter/,
    );
  });

  it('a regex whose \\b YAML read as a backspace ("\\bWIP\\b" in double quotes) is refused with how to write it', () => {
    const filter = (text: string) => () =>
      load(`platforms:\n  webhook:\n    routes:\n      gh:\n        filters:\n          - ${text}\n`);
    expect(filter('not: {field: title, regex: "\\bWIP\\b"}')).toThrow(
      /filters\[0\]\.not\.regex: holds a backspace character where \\b was meant: in "double quotes" YAML \(and JSON\) read \\b as a backspace — in YAML write the pattern in 'single quotes' \('\\bfix\\b'\)/,
    );
    expect(filter("{field: title, regex: '\\bWIP\\b'}")).not.toThrow(/regex/);
    expect(filter('{field: title, regex: "\\\\bWIP\\\\b"}')).not.toThrow(/regex/);
  });

  it("a misshapen filter says how to write it: a field with no operator, a group given one filter or a field, a field that is not text", () => {
    const filter = (text: string) => () =>
      load(`platforms:\n  webhook:\n    routes:\n      gh:\n        filters:\n          - ${text}\n`);
    expect(filter("{field: action}")).toThrow(
      /filters\[0\]: a filter needs an operator beside field: one of exists, missing, equals/,
    );
    expect(filter("{all: {field: a, equals: 1}}")).toThrow(
      /filters\[0\]\.all: expected a list of filters, got one filter — write all: \[\{\.\.\.\}\], a list even for one$/,
    );
    expect(filter("{any: []}")).toThrow(/filters\[0\]\.any: an empty group: list at least one filter in it$/);
    expect(filter("{field: a, any: [{field: b, equals: 1}]}")).toThrow(
      /filters\[0\]: any is a group and takes no field — put field in each filter inside it$/,
    );
    expect(filter("{field: [a], equals: 1}")).toThrow(
      /filters\[0\]\.field: expected text \(a dotted path such as pull_request\.user\.login\), got \["a"\]$/,
    );
  });

  it("filters written as one mapping instead of a list is that one filter", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    secret: s\n    routes:\n      gh:\n        filters:\n          field: action\n          in: [opened]\n",
    );
    expect(config.platforms.webhook.routes.gh?.filters).toEqual([{ field: "action", in: ["opened"] }]);
    expect(() =>
      load(
        "platforms:\n  webhook:\n    routes:\n      gh:\n        filters:\n          field: action\n          in: opened\n",
      ),
    ).toThrow(/routes\.gh\.filters\.in: expected a list, got "opened"/);
  });

  it("a bad filter value is reported with that value and how to write it, not the whole filter", () => {
    const filter = (text: string) => () =>
      load(`platforms:\n  webhook:\n    routes:\n      gh:\n        filters:\n          - ${text}\n`);
    expect(filter("{field: action, equals: [opened, closed]}")).toThrow(
      /routes\.gh\.filters\[0\]\.equals: expected one value \(text, a number, true\/false or null\) — to match any of several values use in: \[\.\.\.\]$/,
    );
    expect(filter("{field: action, in: opened}")).toThrow(
      /routes\.gh\.filters\[0\]\.in: expected a list, got "opened" — write a list: \[opened\]$/,
    );
    // .nan, .inf and 1e400 are one value, not a list: they were told to "use in: [...]" (or given no advice).
    expect(filter("{field: action, equals: .nan}")).toThrow(
      /routes\.gh\.filters\[0\]\.equals: expected one value \(text, a number, true\/false or null\), got NaN — write a finite number, or put it in quotes if it is meant as text$/,
    );
    expect(filter("{field: amount, not_equals: -.inf}")).toThrow(
      /\.not_equals: .*, got -Infinity — write a finite number,/,
    );
    expect(filter("{field: amount, contains: 1e400}")).toThrow(
      /\.contains: .*, got Infinity — write a finite number,/,
    );
    expect(filter("{field: amount, in: [1, .inf]}")).toThrow(
      /routes\.gh\.filters\[0\]\.in\[1\]: expected one value \(text, a number, true\/false or null\), got Infinity — write a finite number, or put it in quotes if it is meant as text$/,
    );
    // A subscription record written by hand: JSON reads 1e400 as Infinity too.
    const stored = parseSubscription("subs.json", "gh", {
      secret: "s",
      filters: [{ field: "amount", equals: JSON.parse("1e400") }],
    });
    expect(stored.ok ? "" : stored.problems.join("\n")).toContain(
      "gh.filters[0].equals: expected one value (text, a number, true/false or null), got Infinity — write a finite number",
    );
    expect(filter("{field: draft, exists: 'yes'}")).toThrow(
      /routes\.gh\.filters\[0\]\.exists: expected true or false, got "yes" — write true or false \(YAML 1\.2 reads yes\/no\/on\/off as text\)$/,
    );
    expect(filter("{not: [{field: a, equals: 1}]}")).toThrow(
      /routes\.gh\.filters\[0\]\.not: not takes one filter \(a mapping\), not a list — to negate several, write not: \{all: \[\.\.\.\]\}/,
    );
    expect(filter("{any: [{field: a, contains: [x]}]}")).toThrow(
      /routes\.gh\.filters\[0\]\.any\[0\]\.contains: expected one value/,
    );
    expect(filter("{field: action, equal: opened}")).toThrow(
      /routes\.gh\.filters\[0\]: unknown filter key "equal" — did you mean "equals"\? \(a filter is field plus one of exists, missing, equals/,
    );
    expect(() =>
      load(
        "platforms:\n  webhook:\n    routes:\n      gh:\n        deliver_extra:\n          chat_id: {room: ops}\n",
      ),
    ).toThrow(
      /routes\.gh\.deliver_extra\.chat_id: expected text \(a \{template\}\), a number or true\/false$/,
    );
  });

  it("reports a section of the wrong type by key, also when WEBHOOK_* variables are set", () => {
    expect(() => load("platforms: hello\n", { WEBHOOK_SECRET: "s" })).toThrow(
      /config\.yaml: platforms: expected a mapping, got "hello"/,
    );
    home.cleanup();
    expect(() => load("platforms:\n  webhook: [1]\n", { WEBHOOK_PORT: "9000" })).toThrow(
      /config\.yaml: platforms\.webhook: expected a mapping, got \[1\]/,
    );
  });

  it("says platforms.webhook.extra must be a mapping (not that extra is unknown)", () => {
    expect(() => load("platforms:\n  webhook:\n    extra: 5\n")).toThrow(
      /config\.yaml: platforms\.webhook\.extra: expected a mapping, got 5/,
    );
  });

  it("names where a bad WEBHOOK_PORT / WEBHOOK_ENABLED came from: the .env file or the environment", () => {
    const fromDotenv = () => load("platforms: {}\n", {}, "WEBHOOK_PORT=soon\n");
    expect(fromDotenv).toThrow(/\.env: WEBHOOK_PORT: expected a port number \(0-65535\), got "soon"/);
    expect(fromDotenv).not.toThrow(/config\.yaml/);
    home.cleanup();
    expect(() => load("platforms: {}\n", { WEBHOOK_ENABLED: "maybe" })).toThrow(
      /^environment variable WEBHOOK_ENABLED: expected true or false \(or yes\/no, on\/off, 1\/0\), got "maybe"/,
    );
  });

  it("a bad WEBHOOK_ENABLED and WEBHOOK_PORT are named together, and with the file's own problems: one pass, not one per run", () => {
    let message = "";
    try {
      load(
        "platforms:\n  webhook:\n    routes:\n      a: {secret: abcabc, evnts: [push]}\n",
        {},
        "WEBHOOK_ENABLED=maybe\nWEBHOOK_PORT=abc\n",
      );
    } catch (err) {
      message = (err as Error).message.replaceAll(home.dir, "H");
    }
    expect(message.split("\n")).toEqual([
      `H/.env: WEBHOOK_ENABLED: expected true or false (or yes/no, on/off, 1/0), got "maybe" — write true or false there, or remove the line to use platforms.webhook.enabled`,
      `H/.env: WEBHOOK_PORT: expected a port number (0-65535), got "abc" — write a plain number (WEBHOOK_PORT=8644; 0 picks a free port) there, or remove the line to use platforms.webhook.port`,
      `H/config.yaml: platforms.webhook.routes.a: unknown key "evnts" — did you mean "events"? (see docs/configuration.md)`,
    ]);
  });

  it("says which limit a number breaks", () => {
    expect(() => load("platforms:\n  webhook:\n    port: 70000\n")).toThrow(
      /config\.yaml: platforms\.webhook\.port: expected at most 65535, got 70000/,
    );
    home.cleanup();
    expect(() => load("platforms:\n  webhook:\n    rate_limit: 0\n")).toThrow(
      /config\.yaml: platforms\.webhook\.rate_limit: expected more than 0, got 0/,
    );
  });

  it("a key with nothing under it (entries commented out) is absent: sections, routes, a route and its properties", () => {
    const { config } = load(
      "gateway:\nplatforms:\n  webhook:\n    secret: s\n    routes:\n      # gh:\n      #   events: [push]\n",
    );
    expect(config.platforms.webhook.routes).toEqual({});
    expect(config.gateway.multiplex_profiles).toBe(false);
    const bare = load(
      "platforms:\n  webhook:\n    secret: s\n    extra:\n      routes:\n        a:\n        b:\n          events:\n          prompt:\n          filters:\n            - field: x\n              equals: null\n",
    ).config.platforms.webhook.routes;
    expect(bare.a).toMatchObject({ deliver: "log" });
    expect(bare.a?.events).toBeUndefined();
    expect(bare.b?.events).toBeUndefined();
    expect(bare.b?.prompt).toBeUndefined();
    expect(bare.b?.filters).toEqual([{ field: "x", equals: null }]);
  });

  it("a setting of agent, gateway, state or tools with its value commented out is absent: its default applies", () => {
    const { config } = load(
      "agent:\n  provider: openai\n  model: qwen3\n  base_url: http://127.0.0.1:11434/v1\n  api_key:   # ${OPENAI_API_KEY}\n  max_steps:   # 10\n  system_prompt:\n  timeout_seconds:\ngateway:\n  drain_timeout_seconds:\nstate:\n  backend:\ntools:\n  web_search:\n",
    );
    expect(config.agent).toMatchObject({ provider: "openai", max_steps: 10, timeout_seconds: 600 });
    expect(config.agent.api_key).toBeUndefined();
    expect(config.agent.system_prompt).toBeUndefined();
    expect(config.gateway.drain_timeout_seconds).toBe(30);
    expect(config.state.backend).toBe("local");
    expect(config.tools.web_search).toBeUndefined();
  });

  it("a setting of a delivery platform or of a tools mapping with its value commented out is absent: its default applies", () => {
    const { config } = load(
      "platforms:\n  telegram:\n    enabled: true\n    token: t\n    home_channel:   # -1001234567890\n    base_url:\n    timeout_seconds:   # 15\n  chat_4:\n    enabled: true\n    number: '+15550001111'\n    base_url:   # http://127.0.0.1:8080\n  email:\n    enabled: true\n    host: smtp.example.com\n    from: svc@example.com\n    port:   # 587\n    password:\n  webhook:\n    secret: s\ntools:\n  web:\n    max_bytes:   # 2097152\n  web_search:\n    backend: searxng\n    url: http://127.0.0.1:8080\n    api_key:   # ${BRAVE_API_KEY}\n    max_results:   # 5\n  terminal:\n    timeout_seconds:\n  file:\n    max_bytes:\n",
    );
    expect(config.platforms.telegram).toMatchObject({
      token: "t",
      base_url: "https://api.telegram.org",
      timeout_seconds: 15,
    });
    expect(config.platforms.telegram?.home_channel).toBeUndefined();
    expect(config.platforms.signal).toMatchObject({ base_url: "http://127.0.0.1:8080" });
    expect(config.platforms.email).toMatchObject({ port: 587 });
    expect(config.platforms.email?.password).toBeUndefined();
    expect(config.tools.web.max_bytes).toBe(2 * 1024 * 1024);
    expect(config.tools.web_search).toMatchObject({ max_results: 5 });
    expect(config.tools.web_search?.api_key).toBeUndefined();
    expect(config.tools.terminal.timeout_seconds).toBe(60);
    expect(config.tools.file.max_bytes).toBe(1024 * 1024);
  });

  it("a key written without its colon (or with no space after it) says to write key: value, never quoting the value", () => {
    const cases: [string, string][] = [
      [
        "platforms:\n  webhook:\n    enabled true\n    port: 80\n",
        "line 3: not valid YAML — Implicit keys need to be on a single line at line 3, column 5 — the line has no colon after its key: write enabled: <value>",
      ],
      [
        "platforms:\n  webhook:\n    port: 80\n    secret s3cret-value\n",
        "line 4: not valid YAML — Implicit map keys need to be followed by map values at line 4, column 5 — the line has no colon after its key: write secret: <value>",
      ],
      [
        "platforms:\n  webhook:\n    port:8644\n    enabled: true\n",
        "line 3: not valid YAML — Implicit keys need to be on a single line at line 3, column 5 — a colon after a key needs a space after it: write port: <value>",
      ],
      [
        "platforms:\n  webhook:\n    routes:\n      gh\n      gl: {}\n",
        "line 4: not valid YAML — Implicit keys need to be on a single line at line 4, column 7 — the line has no colon after its key: write gh: (its value after it, or its keys indented on the lines below)",
      ],
    ];
    for (const [yaml, message] of cases) {
      const thrown = loadFailure(yaml);
      expect(thrown?.message).toBe(`${home.dir}/config.yaml: ${message}`);
      expect(thrown?.message).not.toContain("s3cret-value");
      home.cleanup();
    }
  });

  it("a {key:value} entry with no space after its colon, one key with no value to YAML, is refused at its line rather than dropped as a key left empty", () => {
    const cases: [string, string][] = [
      // Dropped, the route had no secret ("secret: missing") though one was written.
      [
        "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      a: {secret:s3cret-value, events: [push]}\n",
        "line 6: platforms.webhook.routes.a: secret:… has no space after its colon, so YAML reads it as one key with no value — write secret: <value> (a colon after a key needs a space after it)",
      ],
      // Dropped, deliver_only was off: the route ran the agent instead of delivering directly.
      [
        "platforms:\n  telegram: {enabled: true, token: '1:x'}\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      a: {secret: s, deliver: telegram, deliver_only:true}\n",
        "line 7: platforms.webhook.routes.a: deliver_only:… has no space after its colon, so YAML reads it as one key with no value — write deliver_only: <value> (a colon after a key needs a space after it)",
      ],
      [
        "platforms:\n  webhook: {enabled:true, host: 127.0.0.1}\n",
        "line 2: platforms.webhook: enabled:… has no space after its colon, so YAML reads it as one key with no value — write enabled: <value> (a colon after a key needs a space after it)",
      ],
      [
        "platforms:\n  webhook:\n    secret: s\n    routes:\n      a:\n        filters: [{field: action, equals:opened}]\n",
        "line 6: platforms.webhook.routes.a.filters[0]: equals:… has no space after its colon, so YAML reads it as one key with no value — write equals: <value> (a colon after a key needs a space after it)",
      ],
    ];
    for (const [yaml, message] of cases) {
      const thrown = loadFailure(yaml);
      expect(thrown?.message).toBe(`${home.dir}/config.yaml: ${message}`);
      home.cleanup();
    }
    // A template written unquoted where text goes keeps its own advice (quote it).
    expect(() =>
      load("platforms:\n  webhook:\n    secret: s\n    routes:\n      a: {prompt: {env:GH}}\n"),
    ).toThrow("put the template in quotes: prompt: '{env:GH}'");
    // A flow entry whose colon is followed by a flow indicator is a key and its value: `in:[opened]`.
    expect(
      load(
        "platforms:\n  webhook:\n    secret: s\n    routes:\n      a: {filters: [{field: action, in:[opened]}]}\n",
      ).config.platforms.webhook.routes.a?.filters,
    ).toEqual([{ field: "action", in: ["opened"] }]);
  });

  it("the one line under a mapping written without its colon (webhook: then secret s3cret) names the key, not the value", () => {
    expect(() => load("platforms:\n  webhook:\n    secret s3cret-value\n")).toThrow(
      /config\.yaml: platforms\.webhook: expected a mapping, got a line with no ": " after its key secret \(not shown\) — write secret: <value>, a colon and a space after the key$/,
    );
    expect(() => load("platforms:\n  webhook:\n    routes:\n      gh:\n        events:push\n")).toThrow(
      /routes\.gh: expected a mapping, got a line with no ": " after its key events \(not shown\) — write events: <value>/,
    );
    // Text that does not start with one of the mapping's keys is quoted as before.
    expect(() => load("agent: a sentence of words\n")).toThrow(
      /agent: expected a mapping, got "a sentence of words"$/,
    );
  });

  it("YAML 1.1's typed values (!!binary, !!timestamp, !!set, !!omap) are refused at their line, saying what to write; a secret's bytes are not shown", () => {
    const secret = "aGVsbG8gd29ybGQgc2VjcmV0IHZhbHVl";
    const binary = loadFailure(
      `platforms:\n  webhook:\n    routes:\n      pr:\n        secret: !!binary ${secret}\n`,
    );
    expect(binary?.message).toMatch(
      /config\.yaml: line 5: a !!binary value is a YAML 1\.1 type no setting takes — write the text itself, not its base64 \(a secret: in \.env, single-quoted\)$/,
    );
    expect(binary?.message).not.toContain(secret);
    expect(binary?.message).not.toContain("hello world");
    expect(loadFailure("platforms:\n  webhook:\n    secret: !!timestamp 2026-01-01\n")?.message).toMatch(
      /line 3: a !!timestamp value .* write the date in quotes, as text$/,
    );
    // Read as a Map, an ordered map of routes became no routes at all.
    expect(
      loadFailure(
        "platforms:\n  webhook:\n    enabled: true\n    routes: !!omap\n      - pr: {secret: abcdefabcdefabcdef01}\n",
      )?.message,
    ).toMatch(/line 4: a !!omap value .* write a plain mapping$/);
    expect(loadFailure("mcp_servers:\n  a:\n    command: x\n    args: !!set {b, c}\n")?.message).toMatch(
      /line 4: a !!set value .* write a list$/,
    );
    // The tags YAML 1.2 keeps are read as before.
    expect(load("platforms:\n  webhook:\n    port: !!int 8700\n").config.platforms.webhook.port).toBe(8700);
  });

  it("a key holding a line break, a control or a bidi character is shown escaped in quotes: each problem stays one line", () => {
    const failure = loadFailure(
      'platforms:\n  webhook:\n    enabled: true\n    routes:\n      "bad\\nname":\n        secret: abcdefabcdefabcdef01\n      "ok\\u202ename":\n        secret: abcdefabcdefabcdef01\n',
    );
    const lines = failure?.message.split("\n") ?? [];
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/: platforms\.webhook\.routes\."bad\\nname": invalid name — /);
    expect(lines[1]).toMatch(
      /: platforms\.webhook\.routes\."ok\\u202ename": invalid name — .* ASCII only: "\\u202e" is not$/,
    );
    expect(failure?.message).not.toContain("\u202e");
  });

  it("a YAML syntax hint for a credential's line never writes its value back", () => {
    const shown = "'<the value>' (not shown: the key holds a secret)";
    const cases: [string, string][] = [
      ["platforms:\n  webhook:\n    secret: s3cret: value\n", `put the value in quotes: secret: ${shown}`],
      [
        "platforms:\n  webhook:\n    secret: {s3cret} value\n",
        `put the template in quotes: secret: ${shown}`,
      ],
      [
        "platforms:\n  webhook:\n    secret: !s3cret value\n",
        `a !word at the start of a value is a YAML tag, which YAML drops from the value — put the value in quotes: secret: ${shown}`,
      ],
      [
        "platforms:\n  webhook:\n    secret: *s3cret\n",
        `Unresolved alias (the anchor must be set before the alias) — a value that starts with * names an anchor (&name) to YAML — put the value in quotes: secret: ${shown}`,
      ],
      [
        "mcp_servers:\n  gh:\n    command: x\n    env:\n      GITHUB_TOKEN: s3cret: value\n",
        `GITHUB_TOKEN: ${shown}`,
      ],
    ];
    for (const [yaml, hint] of cases) {
      const thrown = loadFailure(yaml);
      expect(thrown?.message).toContain(hint);
      expect(thrown?.message).not.toContain("s3cret");
      home.cleanup();
    }
    // Any other value is written back quoted, as the fix to copy.
    expect(() =>
      load("platforms:\n  webhook:\n    routes:\n      a:\n        prompt: New PR: {x}\n"),
    ).toThrow("put the value in quotes: prompt: 'New PR: {x}'");
  });

  it("a blank secret (spaces only) is no secret: refused in config.yaml, unset as WEBHOOK_SECRET", () => {
    const routes =
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    routes:\n      a: {}\n";
    const blank = load(routes, { WEBHOOK_SECRET: "   " });
    expect(blank.config.platforms.webhook.secret).toBeUndefined();
    expect(startupProblems(blank.config, blank.paths.config)).toEqual([
      `${blank.paths.config}: platforms.webhook.routes.a.secret: missing — set a secret on the route, platforms.webhook.secret, or WEBHOOK_SECRET`,
    ]);
    expect(load(routes, {}, 'WEBHOOK_SECRET=" "\n').config.platforms.webhook.secret).toBeUndefined();
    expect(() => load("platforms:\n  webhook:\n    routes:\n      a: {secret: '  '}\n")).toThrow(
      /routes\.a\.secret: is blank \(spaces only\): anyone could sign with it — write a real secret/,
    );
    expect(() => load("platforms:\n  webhook:\n    secret: ' '\n")).toThrow(
      /platforms\.webhook\.secret: is blank/,
    );
  });

  it("a route written both under routes and extra.routes is named in a warning: the extra one is served, the other dropped", () => {
    const { config, paths } = load(
      "platforms:\n  webhook:\n    secret: s\n    routes:\n      gh: {events: [push]}\n      gl: {}\n    extra:\n      routes:\n        gh: {prompt: x}\n",
    );
    expect(config.platforms.webhook.routes.gh?.events).toBeUndefined();
    expect(unusedSettingWarnings(config, paths.config)).toEqual([
      `[webhook] ${paths.config}: platforms.webhook.routes.gh is also written under platforms.webhook.extra.routes.gh, which wins: this one is not used — remove one of them, or rename one to serve both`,
    ]);
  });

  it("a setting written both directly and under extra is named in a warning (never its value): the extra one is used", () => {
    const yaml =
      "platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    port: 9000\n    rate_limit: 100\n    secret: direct-s3cret\n    max_body_bytes:\n    extra:\n      port: 9001\n      rate_limit: 5\n      secret: extra-s3cret\n      max_body_bytes: 10\n";
    const { config, paths } = load(yaml);
    expect(config.platforms.webhook).toMatchObject({ port: 9001, rate_limit: 5, secret: "extra-s3cret" });
    const warnings = unusedSettingWarnings(config, paths.config);
    expect(warnings).toEqual(
      ["port", "rate_limit", "secret"].map(
        (key) =>
          `[webhook] ${paths.config}: platforms.webhook.${key} is also written under platforms.webhook.extra.${key}, which wins: this one is not used — remove one of them`,
      ),
    );
    expect(warnings.join("\n")).not.toContain("s3cret");
    // WEBHOOK_PORT overrides both: neither is used, so neither is named as the one that wins.
    const overridden = load(yaml, { WEBHOOK_PORT: "9002" });
    expect(overridden.config.platforms.webhook.port).toBe(9002);
    expect(unusedSettingWarnings(overridden.config, overridden.paths.config).join("\n")).not.toContain(
      "platforms.webhook.port",
    );
  });

  it("a list written as one text: an MCP server's args and a route's skills are split one per entry, events are not", () => {
    expect(() => load("mcp_servers:\n  a:\n    command: npx\n    args: -y @scope/server\n")).toThrow(
      'mcp_servers.a.args: expected a list, got "-y @scope/server" — each argument is one entry of a list (svc starts no shell to split a line): write args: [-y, "@scope/server"]',
    );
    expect(() =>
      load("platforms:\n  webhook:\n    secret: s\n    routes:\n      a: {skills: review triage}\n"),
    ).toThrow(
      'routes.a.skills: expected a list, got "review triage" — each name is one entry of a list (a name holds no space): write skills: [review, triage]',
    );
    // An event type may hold spaces (GitLab's Merge Request Hook).
    expect(() =>
      load("platforms:\n  webhook:\n    secret: s\n    routes:\n      a: {events: Merge Request Hook}\n"),
    ).toThrow(
      'routes.a.events: expected a list, got "Merge Request Hook" — write a list: [Merge Request Hook]',
    );
  });

  it("reports YAML syntax errors with the file and line", () => {
    expect(() => load("platforms:\n  webhook: [\n")).toThrow(/config\.yaml: line \d+: not valid YAML/);
  });

  it("a config.yaml or .env that cannot be read says what to do about it", () => {
    home = tempHome();
    mkdirSync(join(home.dir, "config.yaml"));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `${home.dir}/config.yaml: cannot be read (EISDIR: illegal operation on a directory, read) — it is a directory: move it away and write the file in its place`,
    );
    rmdirSync(join(home.dir, "config.yaml"));
    mkdirSync(join(home.dir, ".env"));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `${home.dir}/.env: cannot be read (EISDIR: illegal operation on a directory, read) — it is a directory: move it away and write the file in its place`,
    );
  });

  it("a config.yaml or .env that is a symbolic link to nothing is refused, not taken for no file", () => {
    home = tempHome();
    // A dotfiles checkout that moved: the embedded default (no routes) or no secrets would start silently.
    symlinkSync("../dotfiles/config.yaml", join(home.dir, "config.yaml"));
    const gone = join(home.dir, "..", "dotfiles");
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `${home.dir}/config.yaml: is a symbolic link to ${gone}/config.yaml, which does not exist — restore its target or point the link at the file, or remove the link (svc then runs on its embedded default, with no routes)`,
    );
    unlinkSync(join(home.dir, "config.yaml"));
    symlinkSync("../dotfiles/.env", join(home.dir, ".env"));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `${home.dir}/.env: is a symbolic link to ${gone}/.env, which does not exist — restore its target or point the link at the file, or remove the link (svc then reads no .env)`,
    );
    unlinkSync(join(home.dir, ".env"));
    // A link to itself, or links that come back round: no file at their end, but not a missing target.
    symlinkSync("config.yaml", join(home.dir, "config.yaml"));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `${home.dir}/config.yaml: is a symbolic link into a loop of links, or a chain of more than 40 (no file at its end) — restore its target or point the link at the file`,
    );
  });

  it("a config.yaml or .env saved in another encoding is refused naming the line, not read with U+FFFD in it", () => {
    home = tempHome();
    const config = join(home.dir, "config.yaml");
    const advice =
      "not UTF-8 text — save the file as UTF-8 (in another encoding, such as Latin-1 or Windows-1252, a character like é is read as one no sender uses)";
    // A Latin-1 é in a secret: read as U+FFFD, every signature made with the real secret would fail.
    writeFileSync(config, Buffer.from("platforms:\n  webhook:\n    secret: caf\xe9\n", "latin1"));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(`${config}: line 3: ${advice}`);
    // PowerShell 5's `>` writes UTF-16 with a byte order mark.
    writeFileSync(config, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("agent: {}\n", "utf16le")]));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `${config}: saved as UTF-16 — save it as UTF-8 (in PowerShell: Set-Content -Encoding utf8, or Out-File -Encoding utf8)`,
    );
    unlinkSync(config);
    writeFileSync(join(home.dir, ".env"), Buffer.from("A=1\nWEBHOOK_SECRET=caf\xe9\n", "latin1"));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(`${home.dir}/.env: line 2: ${advice}`);
    // UTF-8 (with or without its byte order mark) is read as before.
    writeFileSync(join(home.dir, ".env"), "\ufeffWEBHOOK_SECRET=café\n");
    expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.secret).toBe("café");
  });

  it("a config.yaml or .env of zero bytes only (a power cut after the file grew) is named so, not quoted back as a value of hundreds of \\u0000", () => {
    home = tempHome();
    const config = join(home.dir, "config.yaml");
    const zeros = (n: number) =>
      `holds only zero bytes (${n} bytes): its data never reached the disk (a power cut or a crash as it was written) — restore it from a backup, or write it again`;
    writeFileSync(config, Buffer.alloc(300));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(`${config}: ${zeros(300)}`);
    unlinkSync(config);
    writeFileSync(join(home.dir, ".env"), Buffer.alloc(64));
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(`${home.dir}/.env: ${zeros(64)}`);
  });

  it("a config.yaml with classic-Mac CR-only line endings is refused as such, not as a nested mapping at line 1", () => {
    home = tempHome();
    const config = join(home.dir, "config.yaml");
    writeFileSync(config, "platforms:\r  webhook:\r    enabled: true\r    secret: s\r");
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(
      `${config}: uses CR-only line endings (classic Mac) — save it with LF (or CRLF) line endings`,
    );
    // A file all comment read as one line would have been an empty config, started on silently.
    writeFileSync(config, "# svc\rplatforms:\r  webhook:\r    secret: s\r");
    expect(() => loadConfig({ home: home.dir, env: {} })).toThrow(/uses CR-only line endings/);
    // .env splits its lines at a lone CR too: read as usual. CRLF config.yaml is read as before.
    writeFileSync(join(home.dir, ".env"), "A=1\rWEBHOOK_SECRET=from-env\r");
    writeFileSync(config, "platforms:\r\n  webhook:\r\n    enabled: true\r\n");
    expect(loadConfig({ home: home.dir, env: {} }).config.platforms.webhook.secret).toBe("from-env");
  });

  it("a name written as a YAML number or null is the text written: route 007 answers at /webhooks/007, not 7", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    secret: s\n    routes:\n      007: {deliver_extra: {1.50: x}}\n      1.10: {}\n      1e3: {}\n      null: {}\n",
    );
    expect(Object.keys(config.platforms.webhook.routes)).toEqual(["007", "1.10", "1e3", "null"]);
    expect(config.platforms.webhook.routes["007"]?.deliver_extra).toEqual({ "1.50": "x" });
  });

  it("two keys YAML tells apart but svc reads as one name (1 and \"1\", true and 'true') are refused at the second, not one dropped", () => {
    expect(() =>
      load(
        'platforms:\n  webhook:\n    secret: s\n    routes:\n      1: {events: [push]}\n      "1": {events: [issues]}\n',
      ),
    ).toThrow(
      /config\.yaml: line 6: platforms\.webhook\.routes: the name 1 is written twice in the same mapping \(as "1" here: YAML reads one as a number or boolean and the other as text, but a name is its text\) — keep one, or rename one of them$/,
    );
    expect(() =>
      load("platforms:\n  webhook:\n    secret: s\n    routes:\n      true: {}\n      'true': {}\n"),
    ).toThrow(/line 6: platforms\.webhook\.routes: the name true is written twice/);
    // Merge keys may repeat, and a merged route's own keys win as before.
    const { config } = load(
      "platforms:\n  webhook:\n    secret: s\n    routes:\n      a: &a {events: [x]}\n      b: &b {prompt: p}\n      c:\n        <<: *a\n        <<: *b\n",
    );
    expect(config.platforms.webhook.routes.c).toMatchObject({ events: ["x"], prompt: "p" });
  });

  it("an alias that expands past the parser's limit is named with the file", () => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x]"];
    for (const [i, name] of [..."bcdefgh"].entries())
      levels.push(`${name}: &${name} [${Array(9).fill(`*${"abcdefg"[i]}`).join(", ")}]`);
    expect(() => load(`${levels.join("\n")}\n`)).toThrow(
      /config\.yaml: not valid YAML — Excessive alias count .*; write the values out instead of through so many aliases/,
    );
  });

  it("a no-break space (pasted from a web page) in the indentation or after a key's colon is named at its line", () => {
    const nbsp = "\u00a0";
    expect(() =>
      load(
        `platforms:\n  webhook:\n    enabled: true\n    routes:\n      gh:\n        secret: nbsp-secret-value\n${nbsp.repeat(8)}events: [push]\n`,
      ),
    ).toThrow(
      /config\.yaml: line 7: the indentation holds a no-break space \(U\+00A0, as text copied from a web page or a chat does\), which YAML reads as part of the key, not as indentation — indent with plain spaces$/,
    );
    expect(() => load(`platforms:\n  webhook:\n    enabled:${nbsp}true\n`)).toThrow(
      /config\.yaml: line 3: enabled: the space after the colon is a no-break space \(U\+00A0, as text copied from a web page or a chat holds\), which YAML does not read as one, so the whole line is taken as text — write a plain space after enabled:$/,
    );
    // Inside a value it is text like any other.
    const { config } = load(
      `platforms:\n  webhook:\n    enabled: true\n    routes:\n      gh:\n        secret: nbsp-secret-value\n        prompt: "PR:${nbsp}{number}"\n`,
    );
    expect(config.platforms.webhook.routes.gh?.prompt).toBe(`PR:${nbsp}{number}`);
  });

  it("an alias inside the value its own anchor names is named at its line, not as a stack overflow or an alias limit", () => {
    expect(() => load("platforms: &p\n  webhook:\n    enabled: true\n    extra: *p\n")).toThrow(
      /config\.yaml: line 4: \*p is inside the value its anchor &p names, so that value would hold itself — an alias repeats a value written before it and outside it: write the values out here$/,
    );
    expect(() =>
      load(
        "platforms:\n  webhook:\n    enabled: true\n    routes:\n      gh: &g\n        secret: self-merge-secret\n        <<: *g\n",
      ),
    ).toThrow(/config\.yaml: line 7: \*g is inside the value its anchor &g names/);
  });

  it("a merge key given a list or a single value is named at its line with the route, not as an alias limit", () => {
    const routes = (gl: string) =>
      `platforms:\n  webhook:\n    enabled: true\n    routes:\n      gh:\n        secret: merge-secret-value\n        events: &ev [push]\n      gl:\n${gl}`;
    expect(() => load(routes("        <<: *ev\n"))).toThrow(
      /config\.yaml: line 9: platforms\.webhook\.routes\.gl: the merge key << takes a mapping \(its keys are copied in\), but \*ev is a list — put the anchor on a mapping \(&name \{\.\.\.\}\) and merge that, or give the alias to the key it is for \(<key>: \*ev\)$/,
    );
    expect(() => load(routes("        <<: [1, 2]\n"))).toThrow(
      /config\.yaml: line 9: platforms\.webhook\.routes\.gl: the merge key << takes a mapping \(its keys are copied in\), but it is given a single value — put the anchor on a mapping \(&name \{\.\.\.\}\) and merge that$/,
    );
    // A mapping's anchor merges as before.
    const { config } = load(routes("        <<: *gh\n").replace("      gh:\n", "      gh: &gh\n"));
    expect(config.platforms.webhook.routes.gl).toMatchObject({
      secret: "merge-secret-value",
      events: ["push"],
    });
  });

  it("a merge of an anchor misspelt or set on a later line is named as an unresolved alias, with the anchor meant", () => {
    const misspelt =
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      gh: &github\n        secret: merge-secret-value\n      a: {<<: *gihtub}\n";
    expect(() => load(misspelt)).toThrow(
      /config\.yaml: line 7: platforms\.webhook\.routes\.a: the merge key << is given \*gihtub, but no anchor &gihtub is set before it: Unresolved alias \(the anchor must be set on an earlier line than its alias\) — did you mean \*github\? \(&github is set on line 5\)$/,
    );
    const later =
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      a: {<<: *github}\n      gh: &github\n        secret: merge-secret-value\n";
    expect(() => load(later)).toThrow(
      /config\.yaml: line 5: platforms\.webhook\.routes\.a: the merge key << is given \*github, but no anchor &github is set before it: Unresolved alias \(the anchor must be set on an earlier line than its alias\) — &github is set on line 6, after this line: move the mapping that sets it above this one, or write its keys out here$/,
    );
    // In a list of sources, and with no anchor near its name.
    const none =
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      gh: &github\n        secret: merge-secret-value\n      a:\n        <<: [*github, *zzz]\n";
    expect(() => load(none)).toThrow(
      /line 8: platforms\.webhook\.routes\.a: the merge key << is given \*zzz, but no anchor &zzz is set before it: .* — set &zzz on the mapping to merge, on a line above this one, or write its keys out here$/,
    );
    // Not "a single value".
    expect(() => load(misspelt)).not.toThrow(/single value/);
  });
});

describe("startup validation rules (spec 2.2)", () => {
  const problems = (yaml: string, env: Record<string, string> = {}) => {
    const loaded = load(yaml, env);
    return webhookStartupProblems(loaded.config, "config.yaml");
  };
  const route = (body: string, host = "0.0.0.0") =>
    `platforms:\n  webhook:\n    enabled: true\n    host: ${host}\n    routes:\n      r:\n${body}`;

  it("rule 1: a route without any secret", () => {
    expect(problems(route("        prompt: hi\n"))).toEqual([
      expect.stringMatching(/routes\.r\.secret: missing/),
    ]);
    expect(problems(route("        prompt: hi\n"), { WEBHOOK_SECRET: "g" })).toEqual([]);
  });
  it("rule 2: deliver_only with log delivery", () => {
    expect(problems(route("        secret: s\n        deliver_only: true\n"))).toEqual([
      expect.stringMatching(/deliver_only: needs a real delivery target/),
    ]);
  });
  it("rule 3: deliver_only together with cron_job", () => {
    expect(
      problems(
        route(
          "        secret: s\n        deliver_only: true\n        deliver: telegram\n        cron_job: j\n",
        ),
      ),
    ).toEqual([expect.stringMatching(/deliver_only and cron_job cannot be combined/)]);
  });
  it("rule 4: coalesce together with cron_job", () => {
    expect(problems(route("        secret: s\n        cron_job: j\n        coalesce: {key: a}\n"))).toEqual([
      expect.stringMatching(/coalesce: cannot be combined/),
    ]);
  });
  it("rule 4: coalesce together with deliver_only", () => {
    expect(
      problems(
        route(
          "        secret: s\n        deliver_only: true\n        deliver: telegram\n        coalesce: {key: a}\n",
        ),
      ),
    ).toEqual([
      expect.stringMatching(/routes\.r\.coalesce: cannot be combined with deliver_only or cron_job/),
    ]);
  });
  it("rule 5: INSECURE_NO_AUTH off loopback", () => {
    expect(problems(route("        secret: INSECURE_NO_AUTH\n"))).toEqual([
      expect.stringMatching(/INSECURE_NO_AUTH is only allowed on a loopback bind/),
    ]);
    expect(problems(route("        secret: INSECURE_NO_AUTH\n", "127.0.0.1"))).toEqual([]);
  });
  it("rule 5: every address of 127.0.0.0/8 (and its IPv4-mapped form) is a loopback bind", () => {
    for (const host of ["127.0.0.2", "127.255.255.254", "::ffff:127.0.0.1"])
      expect(problems(route("        secret: INSECURE_NO_AUTH\n", host)), host).toEqual([]);
    for (const host of ["128.0.0.1", "127.0.0", "10.127.0.1", "::ffff:10.0.0.1"])
      expect(problems(route("        secret: INSECURE_NO_AUTH\n", host)), host).toEqual([
        expect.stringMatching(/INSECURE_NO_AUTH is only allowed on a loopback bind/),
      ]);
    // No address at all, and no loopback one: refused as it is read.
    expect(() => problems(route("        secret: INSECURE_NO_AUTH\n", "127.0.0.256"))).toThrow(
      /"127\.0\.0\.256" is not an IPv4 address/,
    );
  });
  it("names a route (and the global secret) written under extra at platforms.webhook.extra, where it is", () => {
    const loaded = load(
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      direct: {secret: s, deliver: bar}\n" +
        "      both: {secret: s}\n    extra:\n      secret: INSECURE_NO_AUTH\n      routes:\n" +
        "        both: {secret: s, deliver: foo}\n        only: {deliver_only: true}\n" +
        "        tools: {secret: s, toolsets: [web_serch]}\n",
    );
    const { config, paths } = loaded;
    expect(startupProblems(config, "config.yaml")).toEqual([
      "config.yaml: platforms.webhook.extra.routes.only.deliver_only: needs a real delivery target — set deliver to a platform (not log)",
      expect.stringMatching(
        /^config\.yaml: platforms\.webhook\.extra\.secret \(global secret or WEBHOOK_SECRET, used by route only and/,
      ),
      expect.stringMatching(
        /^config\.yaml: platforms\.webhook\.routes\.direct\.deliver: unknown target "bar"/,
      ),
      expect.stringMatching(
        /^config\.yaml: platforms\.webhook\.extra\.routes\.both\.deliver: unknown target "foo"/,
      ),
    ]);
    expect(toolsetWarnings(routeTable(config), [], paths.config)).toEqual([
      expect.stringContaining(": platforms.webhook.extra.routes.tools.toolsets: unknown toolset"),
    ]);
    const spaced = load(
      "platforms:\n  webhook:\n    extra:\n      secret: ' g'\n      routes:\n        r: {}\n",
    );
    const table = routeTable(spaced.config);
    expect(
      secretCharacterWarnings(table.staticRoutes.values(), "config.yaml", table.globalSecretKey),
    ).toEqual([
      expect.stringMatching(
        /^\[webhook\] config\.yaml: platforms\.webhook\.extra\.secret \(the global secret or WEBHOOK_SECRET, which overrides it; route r uses it\) begins/,
      ),
    ]);
  });
});

describe("a WEBHOOK_* variable beside an extra mapping that does not hold its key", () => {
  it("is named as the variable and platforms.webhook.<key>, never as an extra.<key> the file does not have", () => {
    // extra holds rate_limit only; WEBHOOK_SECRET and WEBHOOK_PORT come from .env.
    const yaml = (extra: string) =>
      `platforms:\n  webhook:\n    enabled: true\n    host: 127.0.0.1\n    extra:\n      rate_limit: 5\n${extra}    routes:\n      r: {}\n`;
    const loaded = load(yaml(""), {}, "WEBHOOK_SECRET=' g'\nWEBHOOK_PORT=9001\n");
    const table = routeTable(loaded.config);
    expect(table.globalSecretKey).toBe("platforms.webhook.secret");
    expect(
      secretCharacterWarnings(table.staticRoutes.values(), "config.yaml", table.globalSecretKey),
    ).toEqual([
      expect.stringMatching(
        /^\[webhook\] config\.yaml: platforms\.webhook\.secret \(the global secret or WEBHOOK_SECRET, which overrides it; route r uses it\) begins/,
      ),
    ]);
    expect(loaded.config.platforms.webhook).toMatchObject({ port: 9001, secret: " g", rate_limit: 5 });
    // A reload after .env's WEBHOOK_PORT changed names the key as the docs do: platforms.webhook.port (set by WEBHOOK_PORT).
    home.cleanup();
    const next = load(yaml(""), {}, "WEBHOOK_SECRET=' g'\nWEBHOOK_PORT=9002\n");
    expect(restartOnlyChanges(loaded.config, next.config)).toEqual(["platforms.webhook.port"]);
    // Written under extra too, the variable overrides that key, named where the file has it.
    home.cleanup();
    const written = load(
      yaml("      port: 9100\n      secret: ' x'\n"),
      {},
      "WEBHOOK_SECRET=' g'\nWEBHOOK_PORT=9001\n",
    );
    expect(written.config.platforms.webhook).toMatchObject({ port: 9001, secret: " g" });
    expect(routeTable(written.config).globalSecretKey).toBe("platforms.webhook.extra.secret");
    home.cleanup();
    const writtenNext = load(yaml("      port: 9100\n"), {}, "WEBHOOK_PORT=9002\n");
    expect(restartOnlyChanges(written.config, writtenNext.config)).toEqual(["platforms.webhook.extra.port"]);
  });
});

describe("names JavaScript objects reserve, in config.yaml", () => {
  it("__proto__ as a route, server or key is refused, naming the file, line and key path", () => {
    const route =
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      __proto__:\n        secret: s\n";
    expect(() => load(route)).toThrow(
      /config\.yaml: line 5: platforms\.webhook\.routes\.__proto__: "__proto__" cannot be used as a name[^\n]*rename it/,
    );
    expect(() => load("mcp_servers:\n  __proto__:\n    url: http://127.0.0.1:1/mcp\n")).toThrow(
      /config\.yaml: line 2: mcp_servers\.__proto__: "__proto__" cannot be used/,
    );
    const extra =
      "platforms:\n  webhook:\n    extra:\n      routes:\n        r:\n          secret: s\n          deliver_extra:\n            __proto__: x\n";
    expect(() => load(extra)).toThrow(
      /line 8: platforms\.webhook\.extra\.routes\.r\.deliver_extra\.__proto__: "__proto__" cannot be used/,
    );
  });

  it("constructor and toString are ordinary route and server names", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      constructor: {secret: a}\n      toString: {secret: b}\n" +
        "mcp_servers:\n  constructor:\n    url: http://127.0.0.1:1/mcp\n",
    );
    expect(Object.entries(config.platforms.webhook.routes).map(([name, r]) => [name, r.secret])).toEqual([
      ["constructor", "a"],
      ["toString", "b"],
    ]);
    expect(Object.keys(config.mcp_servers)).toEqual(["constructor"]);
  });
});

describe("a key written as a list or mapping in config.yaml", () => {
  it("a route name in brackets or braces is refused at its line with the name to write", () => {
    const route = (key: string) =>
      `platforms:\n  webhook:\n    enabled: true\n    routes:\n      ${key}:\n        secret: brackets-secret-value\n`;
    expect(() => load(route("[github]"))).toThrow(
      /config\.yaml: line 5: platforms\.webhook\.routes: the key \[github\] is a list to YAML, not a name — write the name alone, without the \[ \]: github:$/,
    );
    expect(() => load(route("{github}"))).toThrow(
      /config\.yaml: line 5: platforms\.webhook\.routes: the key \{github\} is a mapping to YAML, not a name — write the name alone, without the \{ \}: github:$/,
    );
  });

  it("an explicit ? [a, b] key at the top level is refused as it is written", () => {
    expect(() => load("platforms: {webhook: {enabled: true}}\n? [alpha, beta]\n: x\n")).toThrow(
      /config\.yaml: line 2: \(top level\): the key \[alpha, beta\] is a list to YAML, not a name — write the key as a name \(text\)$/,
    );
  });
});

describe("deliver_extra values keep the text written in config.yaml", () => {
  it("an unquoted Slack thread_ts, a long chat id or 1.50 is read as written, not as a number", () => {
    const { config } = load(
      "platforms:\n  webhook:\n    enabled: true\n    port: 9000\n    routes:\n      r:\n        secret: s\n" +
        "        filters: [{field: n, equals: 1.50}]\n        deliver: slack\n        deliver_extra:\n" +
        "          channel: C123\n          thread_ts: 1700000000.000100\n          chat_id: 123456789012345678901\n" +
        "          message_thread_id: 42\n          price: 1.50\n          hex: 0x1F\n          notify: true\n" +
        "          quoted: '007'\n",
    );
    expect(config.platforms.webhook.routes.r?.deliver_extra).toEqual({
      channel: "C123",
      thread_ts: "1700000000.000100",
      chat_id: "123456789012345678901",
      message_thread_id: "42",
      price: "1.50",
      hex: "0x1F",
      notify: true,
      quoted: "007",
    });
    // Other keys are typed as before.
    expect(config.platforms.webhook.port).toBe(9000);
    expect(config.platforms.webhook.routes.r?.filters?.[0]).toMatchObject({ equals: 1.5 });
  });
});

describe("a platform's ids keep the text written in config.yaml", () => {
  it("an unquoted home_channel phone number keeps its + and leading 0; phone_number_id and QQ app_id likewise", () => {
    const { config } = load(
      "platforms:\n  sms: {enabled: true, account_sid: AC1, auth_token: t, from: '+15550001111', home_channel: +15552223333}\n" +
        "  chat_4: {enabled: true, number: '+4915100000000', home_channel: 04915112345678}\n" +
        "  whatsapp: {enabled: true, token: t, phone_number_id: 0123456789, home_channel: 1234567890123456789}\n" +
        "  qqbot: {enabled: true, app_id: 0102, client_secret: s, home_channel: group:1}\n" +
        "  webhook: {enabled: false, port: 9000}\n",
    );
    expect(config.platforms.sms?.home_channel).toBe("+15552223333");
    expect(config.platforms.signal?.home_channel).toBe("04915112345678");
    expect(config.platforms.whatsapp?.phone_number_id).toBe("0123456789");
    expect(config.platforms.whatsapp?.home_channel).toBe("1234567890123456789");
    expect(config.platforms.qqbot?.app_id).toBe("0102");
    expect(config.platforms.sms?.timeout_seconds).toBe(15);
    expect(config.platforms.webhook.port).toBe(9000);
  });
});

describe("a platform's sending number keeps the text written in config.yaml, as its home_channel does", () => {
  it("sms from: +15550001111 and signal number: +4915100000000 unquoted keep their + (they were refused as numbers)", () => {
    const { config } = load(
      "platforms:\n  sms: {enabled: true, account_sid: AC1, auth_token: t, from: +15550001111, home_channel: +15552223333}\n" +
        "  chat_4: {enabled: true, number: +4915100000000, home_channel: 04915112345678}\n" +
        "  webhook: {enabled: false, port: 9000}\n",
    );
    expect(config.platforms.sms?.from).toBe("+15550001111");
    expect(config.platforms.signal?.number).toBe("+4915100000000");
    expect(config.platforms.webhook.port).toBe(9000);
  });
});

describe("${VAR} named like an Object.prototype member", () => {
  it("an unset ${toString} or ${constructor} keeps its text (a secret is refused as not set), a set one is its value", () => {
    const yaml =
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n      r:\n        secret: '${toString}'\n        prompt: 'a ${constructor} b ${__proto__}'\n";
    const { config, paths } = load(yaml);
    expect(config.platforms.webhook.routes.r?.prompt).toBe("a ${constructor} b ${__proto__}");
    expect(webhookStartupProblems(config, paths.config)).toEqual([
      expect.stringContaining("platforms.webhook.routes.r.secret: ${toString} is not set — set toString in"),
    ]);
    const set = load(yaml, { constructor: "ctor" }, "toString=s3cret\n").config.platforms.webhook.routes.r;
    expect([set?.secret, set?.prompt]).toEqual(["s3cret", "a ctor b ${__proto__}"]);
  });
});

describe("a route secret variable set only in the bound profile's .env", () => {
  it("is refused as not set, saying that profile's .env is not read for config.yaml", () => {
    // The text of a variable reference, `$` then `{NAME}`.
    const ref = (name: string) => `$\{${name}}`;
    const yaml =
      "platforms:\n  webhook:\n    enabled: true\n    routes:\n" +
      `      billing-hook:\n        profile: work\n        secret: '${ref("WORK_HOOK_SECRET")}'\n` +
      `      other-hook:\n        profile: ops\n        secret: '${ref("OPS_HOOK_SECRET")}'\n`;
    const { config, paths } = load(yaml);
    home.write("profiles/work/.env", "WORK_HOOK_SECRET=work-hook-secret-value-3391\n", 0o600);
    const envFile = join(home.dir, ".env");
    expect(webhookStartupProblems(config, paths.config)).toEqual([
      `${paths.config}: platforms.webhook.routes.billing-hook.secret: ${ref("WORK_HOOK_SECRET")} is not set — set WORK_HOOK_SECRET in ${envFile} or the environment (${join(home.dir, "profiles", "work", ".env")} sets it, but config.yaml reads its ${ref("...")} values from ${envFile} only: a profile's .env serves only that profile's MCP connections)`,
      // ops has no .env setting it: only where to set it.
      `${paths.config}: platforms.webhook.routes.other-hook.secret: ${ref("OPS_HOOK_SECRET")} is not set — set OPS_HOOK_SECRET in ${envFile} or the environment`,
    ]);
  });
});

describe("platforms.webhook.host written as a ${VAR}", () => {
  const yaml = (host: string) =>
    `platforms:\n  webhook:\n    enabled: true\n    host: '${host}'\n    routes:\n      r: {secret: x}\n`;

  it("an unset one is refused naming the variable (its text would reach listen() as a host name)", () => {
    expect(() => load(yaml("$" + "{BIND_HOST}"))).toThrow(
      /platforms\.webhook\.host: \$\{BIND_HOST\} is not set — set BIND_HOST in \S+\/\.env or the environment/,
    );
    expect(() => load(yaml("$" + "{BIND_HOST:?set it}"))).toThrow(
      /platforms\.webhook\.host: \$\{BIND_HOST:\?set it\} is not a variable form svc reads/,
    );
  });

  it("a set one, or one with a fallback, is the address", () => {
    expect(load(yaml("$" + "{BIND_HOST}"), {}, "BIND_HOST=127.0.0.1\n").config.platforms.webhook.host).toBe(
      "127.0.0.1",
    );
    expect(load(yaml("$" + "{BIND_HOST:-::1}")).config.platforms.webhook.host).toBe("::1");
  });
});
