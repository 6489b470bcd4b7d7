import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { parseSubscription } from "../../../src/io/stores/subscriptions.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

/** The error loading `yaml` as config.yaml gives, with the file's path replaced by FILE. */
function refusal(yaml: string, dotenv?: string): string {
  const h = tempHome();
  home = h;
  const file = h.write("config.yaml", yaml);
  if (dotenv !== undefined) h.write(".env", dotenv);
  try {
    loadConfig({ home: h.dir, env: {} });
  } catch (err) {
    return (err as Error).message.replaceAll(file, "FILE");
  }
  throw new Error("loaded without an error");
}

const webhook = (body: string) => `platforms:\n  webhook:\n${body}`;

describe("what a refusal quotes", () => {
  it(`a value a $\{VAR} gave is never quoted (it may be a secret from .env): the file's text is`, () => {
    const message = refusal(
      webhook(`    rate_limit: $\{API}\n    routes:\n      r1: {secret: abc, prompt: ["$\{S}"]}\n`),
      "API=sk-leak-FFF666\nS=sec-GGG777\n",
    );
    expect(message).toContain(
      `FILE: platforms.webhook.rate_limit: expected a number, got "$\{API}" (the value it gives is not shown)`,
    );
    expect(message).toContain(
      `FILE: platforms.webhook.routes.r1.prompt: expected a string, got ["$\{S}"] (the value it gives is not shown)`,
    );
    expect(message).not.toMatch(/sk-leak|sec-GGG/);
  });

  it("a list or mapping with a secret inside is not quoted (routes written as a list of {name, secret})", () => {
    expect(refusal(webhook("    routes:\n      - name: gh\n        secret: hunter2\n"))).toBe(
      'FILE: platforms.webhook.routes: expected a mapping, got a list (not shown: it holds a secret) — write each entry under its name, not as a list item with name: (gh: on its own line, its other keys indented under it, no "- " and no name: key)',
    );
    // Without one, the value is quoted as ever.
    expect(refusal(webhook("    routes: [gh, ci]\n"))).toBe(
      'FILE: platforms.webhook.routes: expected a mapping, got ["gh","ci"]',
    );
  });

  it(".nan, .inf and 1e400 are named as they are, not as null; a whole number past 2^53 is too large", () => {
    expect(refusal(webhook("    port: .nan\n    max_body_bytes: .inf\n    rate_limit: 1e400\n"))).toBe(
      [
        "FILE: platforms.webhook.port: expected a number, got NaN",
        "FILE: platforms.webhook.rate_limit: expected a number, got Infinity",
        "FILE: platforms.webhook.max_body_bytes: expected a number, got Infinity",
      ].join("\n"),
    );
    expect(refusal(webhook("    rate_limit: 99999999999999999999999\n"))).toBe(
      'FILE: platforms.webhook.rate_limit: expected a number, got "99999999999999999999999" — too large: at most 9007199254740991',
    );
  });
});

describe("a value of the wrong form is refused with how to write it (spec 2.1 types)", () => {
  it("a quoted port or one from ${VAR}: write the number without quotes", () => {
    expect(refusal(webhook('    port: "8644"\n'))).toBe(
      'FILE: platforms.webhook.port: expected a number, got "8644" — write the number without quotes (a ${VAR} always gives text)',
    );
    expect(refusal(webhook("    port: ${PORT}\n"), "PORT=9000\n")).toContain(
      `platforms.webhook.port: expected a number, got "$\{PORT}" (the value it gives is not shown) — a $\{VAR} always gives text: write the value itself in the file`,
    );
  });

  it("a size with a unit: write a plain number", () => {
    expect(refusal(webhook("    max_body_bytes: 1mb\n"))).toBe(
      'FILE: platforms.webhook.max_body_bytes: expected a number, got "1mb" — write a plain number, without units or quotes',
    );
  });

  it("events: push (a string for a list) shows the list to write", () => {
    expect(refusal(webhook("    routes:\n      gh: {secret: s, events: pull_request}\n"))).toBe(
      'FILE: platforms.webhook.routes.gh.events: expected a list, got "pull_request" — write a list: [pull_request]',
    );
  });

  it("a fractional port names a whole number, not zod's 'int'", () => {
    expect(refusal(webhook("    port: 8644.5\n"))).toBe(
      "FILE: platforms.webhook.port: expected a whole number, got 8644.5",
    );
  });

  it("enabled: yes (YAML 1.1) and enabled: 'true' say to write true or false", () => {
    expect(refusal(webhook("    enabled: yes\n"))).toBe(
      'FILE: platforms.webhook.enabled: expected true or false, got "yes" — write true or false (YAML 1.2 reads yes/no/on/off as text)',
    );
    expect(refusal(webhook('    enabled: "true"\n'))).toBe(
      'FILE: platforms.webhook.enabled: expected true or false, got "true" — write true or false, without quotes',
    );
  });

  it("a tab-indented file names the line and says to indent with spaces", () => {
    expect(refusal("platforms:\n\twebhook:\n\t\tenabled: true\n")).toBe(
      "FILE: line 2: not valid YAML — Tabs are not allowed as indentation at line 2, column 1 — indent with spaces",
    );
  });

  it("a key written twice (two routes of one name) is named, with what to do", () => {
    expect(refusal(webhook("    routes:\n      gh: {secret: x}\n      gh: {secret: y}\n"))).toBe(
      "FILE: line 5: not valid YAML — Map keys must be unique at line 5, column 7 — the key gh is written twice in the same mapping: keep one, or rename one of them (a YAML mapping holds each name once)",
    );
    expect(refusal(webhook("    routes:\n      gh: {secret: x, secret: y}\n"))).toMatch(
      /line 4: not valid YAML — .* — the key secret is written twice in the same mapping/,
    );
  });

  it("a quote never closed is named where it opens, not at the end of the file the parser read on to", () => {
    expect(refusal(webhook('    port: "8644\n    host: 127.0.0.1\n  other: 1\n'))).toBe(
      `FILE: line 3: not valid YAML — the " that opens a value at line 3, column 11 is never closed (the parser read on to the end of the file) — close it where the value ends`,
    );
    expect(refusal(webhook("    routes:\n      a: {secret: 'x, events: [a]}\nagent: {}\n"))).toBe(
      "FILE: line 4: not valid YAML — the ' that opens a value at line 4, column 19 is never closed (the parser read on to the end of the file) — close it where the value ends",
    );
  });

  it("a [list or {mapping never closed is named where its bracket opens, not at the next line", () => {
    expect(
      refusal(webhook("    routes:\n      gh:\n        events: [push, pull_request\n        prompt: hi\n")),
    ).toBe(
      "FILE: line 5: not valid YAML — the [ that opens a list at line 5, column 17 is never closed — end the list with ]",
    );
    expect(
      refusal(webhook("    routes:\n      gh:\n        deliver_extra: {chat_id: 1\n        prompt: hi\n")),
    ).toBe(
      "FILE: line 5: not valid YAML — the { that opens a mapping at line 5, column 24 is never closed — end the mapping with }",
    );
    expect(refusal(webhook("    routes:\n      gh:\n        events: [push,\n        pull_request]\n"))).toBe(
      "FILE: line 5: not valid YAML — the [ that opens a list at line 5, column 17 goes on at line 6, which is indented no further than its key — indent the list's further lines past the key, or write it on one line",
    );
  });

  it("an unquoted ${VAR} inside a {flow: mapping} says to quote it", () => {
    expect(refusal(webhook("    routes:\n      gh: {secret: ${GH}}\n"), "GH=x\n")).toMatch(
      /^FILE: line 4: not valid YAML — .* — put values written as \$\{VAR\} in quotes$/,
    );
    // In a [flow, list] too, where the parser's words are about a missing comma.
    expect(refusal(webhook("    routes:\n      gh:\n        events: [push, ${EV}]\n"), "EV=x\n")).toBe(
      "FILE: line 5: not valid YAML — Missing , or : between flow sequence items at line 5, column 25 — put values written as ${VAR} in quotes",
    );
  });

  it('a regex in "double quotes" with a backslash YAML cannot read (\\d) says to single-quote it', () => {
    expect(
      refusal(webhook('    routes:\n      gh:\n        filters:\n          - {field: n, regex: "^\\d+$"}\n')),
    ).toBe(
      "FILE: line 6: not valid YAML — Invalid escape sequence \\d at line 6, column 33 — in \"double quotes\" a backslash starts a YAML escape: write a regex or path in 'single quotes' ('^\\d+$'), unquoted, or with the backslash doubled (\"^\\\\d+$\")",
    );
  });
});

describe("coalesce written in another form", () => {
  it("a bare key path says to write the mapping; a missing key says what it names", () => {
    expect(refusal(webhook("    routes:\n      r: {secret: s, coalesce: pull_request.number}\n"))).toBe(
      'FILE: platforms.webhook.routes.r.coalesce: expected a mapping, got "pull_request.number" — write coalesce: {key: pull_request.number}',
    );
    expect(refusal(webhook("    routes:\n      r: {secret: s, coalesce: {window_seconds: 5}}\n"))).toBe(
      "FILE: platforms.webhook.routes.r.coalesce.key: missing — set it to the payload path that names the entity (pull_request.number) or a {template}",
    );
  });
});

describe("an MCP server's command", () => {
  it("written as a whole argv list (as opencode's config does) says to split it into command and args", () => {
    const mcp = (command: string) =>
      refusal(`platforms: {webhook: {enabled: true}}\nmcp_servers:\n  a: {command: ${command}}\n`);
    expect(mcp("[npx, -y, '@scope/pkg']")).toBe(
      `FILE: mcp_servers.a.command: expected a string, got ["npx","-y","@scope/pkg"] — command is the program alone: write command: npx and args: [-y, @scope/pkg]`,
    );
    expect(mcp("[uvx]")).toBe(
      `FILE: mcp_servers.a.command: expected a string, got ["uvx"] — command is the program alone: write command: uvx`,
    );
  });
});

describe("route names", () => {
  it("a ${VAR} written as a route's name says that variables are replaced in values only", () => {
    expect(refusal(webhook("    routes:\n      $" + "{R}: {secret: s}\n"), "R=gh\n")).toBe(
      "FILE: platforms.webhook.routes.$" +
        "{R}: invalid name — route names use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit); a $" +
        "{VAR} is replaced in values only, never in a name: write the route's name itself",
    );
  });

  it("a name of allowed characters that starts with one a name may not start with says so", () => {
    expect(refusal(webhook("    routes:\n      -x: {secret: s}\n"))).toBe(
      "FILE: platforms.webhook.routes.-x: invalid name — route names use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)",
    );
  });

  it("a name of allowed characters that is too long says how long it is, in config.yaml and the store", () => {
    const name = "a".repeat(65);
    expect(
      refusal(webhook(`    routes:\n      ${name}: {secret: s}\n      ${name.slice(1)}: {secret: s}\n`)),
    ).toBe(
      `FILE: platforms.webhook.routes.${name}: invalid name — 65 characters long — a route name has at most 64: shorten it`,
    );
    const parsed = parseSubscription("subs.json", name, { secret: "s" });
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      `subs.json: ${name}: 65 characters long — a route name has at most 64: shorten it`,
    ]);
  });
});

/**
 * webhook_subscriptions.json is JSON: the YAML advice (`write a list: [push]`) written into it breaks the
 * whole file, and no ${VAR} or YAML 1.1 spelling is involved there.
 */
describe("a subscription record's wrong value form", () => {
  const problems = (record: Record<string, unknown>) => {
    const parsed = parseSubscription("subs.json", "gh", { secret: "s", ...record });
    return parsed.ok ? [] : parsed.problems;
  };
  it("is advised in JSON", () => {
    expect(problems({ events: "push" })).toEqual([
      'subs.json: gh.events: expected a list, got "push" — write a list: ["push"]',
    ]);
    expect(problems({ enabled: "yes" })).toEqual([
      'subs.json: gh.enabled: expected true or false, got "yes" — write true or false, without quotes',
    ]);
    expect(problems({ coalesce: { key: "a", window_seconds: "5" } })).toEqual([
      'subs.json: gh.coalesce.window_seconds: expected a number, got "5" — write the number without quotes',
    ]);
  });

  it("gives the in: [] example in JSON", () => {
    expect(problems({ filters: [{ field: "action", in: [] }] })).toEqual([
      'subs.json: gh.filters[0].in: an empty list matches nothing — list the values, e.g. "in": ["opened", "reopened"]',
    ]);
  });
});
