import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { unsetPlatformVariableWarnings } from "../../../src/config/unsetPlatformVariables.js";
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

  it("a route's script or cron_job of spaces only is refused as an empty one is, saying what to write", () => {
    const route = (key: string) =>
      webhook(`    routes:\n      r:\n        secret: x\n        ${key}: "   "\n`);
    expect(refusal(route("script"))).toBe(
      "FILE: platforms.webhook.routes.r.script: is blank (spaces only) — write the script's file name in the profile's scripts/ directory, or leave the key out",
    );
    expect(refusal(route("cron_job"))).toBe(
      "FILE: platforms.webhook.routes.r.cron_job: is blank (spaces only) — write the cron job's id or name (svc cron list), or leave the key out",
    );
  });

  it("a list or mapping with a secret inside is not quoted (routes written as a list of {name, secret})", () => {
    expect(refusal(webhook("    routes:\n      - name: gh\n        secret: hunter2\n"))).toBe(
      'FILE: platforms.webhook.routes: expected a mapping, got a list (not shown: it holds a secret) — write each entry under its name, not as a list item with name: (gh: on its own line, its other keys indented under it, no "- " and no name: key)',
    );
    // Without one, the value is quoted as ever (a list of route names, with how to write them).
    expect(refusal(webhook("    routes: [gh, ci]\n"))).toBe(
      'FILE: platforms.webhook.routes: expected a mapping, got ["gh","ci"] — routes maps each route\'s name to its keys: write gh: on its own line under routes:, with its keys (secret, events, ...) indented under it (gh: {} for a route with no keys of its own)',
    );
    // One route's name as the value of routes: the same advice.
    expect(refusal(webhook("    routes: gh\n"))).toBe(
      'FILE: platforms.webhook.routes: expected a mapping, got "gh" — routes maps each route\'s name to its keys: write gh: on its own line under routes:, with its keys (secret, events, ...) indented under it (gh: {} for a route with no keys of its own)',
    );
  });

  it("a {template} written without quotes (YAML reads a mapping) is told to be quoted; a secret's never shown", () => {
    expect(
      refusal(
        webhook(
          "    routes:\n      gh:\n        secret: {hunter2}\n        prompt: {pull_request.title}\n        deliver_extra: {chat_id: {message.chat.id}}\n        coalesce:\n          key: {pull_request.number}\n",
        ),
      ),
    ).toBe(
      [
        "FILE: platforms.webhook.routes.gh.secret: expected a string, got a mapping (not shown: the key holds a secret) — YAML reads a value that starts with { as a mapping: put the value in quotes",
        `FILE: platforms.webhook.routes.gh.prompt: expected a string, got {"pull_request.title":null} — YAML reads a value that starts with { as a mapping: put the template in quotes: prompt: '{pull_request.title}'`,
        `FILE: platforms.webhook.routes.gh.deliver_extra.chat_id: expected text (a {template}), a number or true/false — YAML reads a value that starts with { as a mapping: put the template in quotes: chat_id: '{message.chat.id}'`,
        `FILE: platforms.webhook.routes.gh.coalesce.key: expected a string, got {"pull_request.number":null} — YAML reads a value that starts with { as a mapping: put the template in quotes: key: '{pull_request.number}'`,
      ].join("\n"),
    );
  });

  it(".nan, .inf and 1e400 are named as they are, not as null; a whole number past 2^53 is too large", () => {
    expect(refusal(webhook("    port: .nan\n    max_body_bytes: .inf\n    rate_limit: 1e400\n"))).toBe(
      [
        "FILE: platforms.webhook.port: expected a number, got NaN — write a finite number",
        "FILE: platforms.webhook.rate_limit: expected a number, got Infinity — write a finite number",
        "FILE: platforms.webhook.max_body_bytes: expected a number, got Infinity — write a finite number",
      ].join("\n"),
    );
    expect(refusal(webhook("    rate_limit: 99999999999999999999999\n"))).toBe(
      "FILE: platforms.webhook.rate_limit: 99999999999999999999999 is too large to be read exactly (a whole number is read up to 9007199254740991) — write a smaller number",
    );
  });
});

describe("a duration of .inf or 1e400 is refused with the finite value to write", () => {
  const CAPPED =
    "write a finite number of seconds; one above 2147483 (about 24.8 days, the longest a timer holds) counts as 2147483";

  it("coalesce windows and timeouts, whose huge values are capped, say so", () => {
    expect(
      refusal(
        webhook(
          "    script_timeout_seconds: .inf\n    routes:\n      gh:\n        coalesce: {key: n, window_seconds: .inf, max_wait_seconds: 1e400}\n",
        ),
      ),
    ).toBe(
      [
        `FILE: platforms.webhook.script_timeout_seconds: expected a number, got Infinity — ${CAPPED}`,
        `FILE: platforms.webhook.routes.gh.coalesce.window_seconds: expected a number, got Infinity — ${CAPPED}`,
        `FILE: platforms.webhook.routes.gh.coalesce.max_wait_seconds: expected a number, got Infinity — ${CAPPED}`,
      ].join("\n"),
    );
    expect(refusal("agent:\n  timeout_seconds: .inf\n")).toBe(
      `FILE: agent.timeout_seconds: expected a number, got Infinity — ${CAPPED}`,
    );
  });

  it("a bounded number says its range: gateway.drain_timeout_seconds at most 3600", () => {
    expect(refusal("gateway:\n  drain_timeout_seconds: .inf\nagent:\n  max_concurrent_runs: .nan\n")).toBe(
      [
        "FILE: gateway.drain_timeout_seconds: expected a number, got Infinity — write a finite number of seconds, at most 3600",
        "FILE: agent.max_concurrent_runs: expected a number, got NaN — write a whole number from 1 to 1000",
      ].join("\n"),
    );
    expect(
      refusal(
        "agent:\n  max_steps: .inf\n  retries: .nan\ntools:\n  web_search: {backend: brave, api_key: k, max_results: .inf}\n",
      ).split("\n"),
    ).toEqual(
      expect.arrayContaining([
        "FILE: agent.max_steps: expected a number, got Infinity — write a whole number from 1 to 1000",
        "FILE: agent.retries: expected a number, got NaN — write a whole number from 0 to 10",
        "FILE: tools.web_search.max_results: expected a number, got Infinity — write a whole number from 1 to 20",
      ]),
    );
    expect(refusal(webhook("    workers: .inf\n"))).toBe(
      "FILE: platforms.webhook.workers: expected a number, got Infinity — write a whole number from 0 to 64",
    );
  });

  it("an MCP server's timeouts too", () => {
    expect(
      refusal(
        "platforms: {webhook: {enabled: true}}\nmcp_servers:\n  a: {command: node, timeout: .inf, idle_timeout_seconds: 1e400}\n",
      ),
    ).toBe(
      [
        `FILE: mcp_servers.a.timeout: expected seconds, got Infinity — ${CAPPED}`,
        `FILE: mcp_servers.a.idle_timeout_seconds: expected seconds, got Infinity — ${CAPPED}`,
      ].join("\n"),
    );
  });

  it("a subscription's coalesce window in JSON (1e400 parses as Infinity)", () => {
    const parsed = parseSubscription(
      "subs.json",
      "gh",
      JSON.parse('{"coalesce": {"key": "n", "window_seconds": 1e400}}'),
    );
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      `subs.json: gh.coalesce.window_seconds: expected a number, got Infinity — ${CAPPED}`,
    ]);
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

  it("port or enabled from ${VAR}: the variable the adapter reads instead is named (a PORT a platform sets)", () => {
    expect(refusal(webhook("    port: ${PORT}\n"), "PORT=9000\n")).toBe(
      `FILE: platforms.webhook.port: expected a number, got "$\{PORT}" (the value it gives is not shown) — a $\{VAR} always gives text: write the value itself in the file, or set WEBHOOK_PORT in .env or the environment instead, which the adapter reads as a number (it overrides the file)`,
    );
    expect(refusal(webhook("    extra:\n      enabled: ${ON}\n"), "ON=true\n")).toBe(
      `FILE: platforms.webhook.extra.enabled: expected true or false, got "$\{ON}" (the value it gives is not shown) — a $\{VAR} always gives text: write the value itself in the file, or set WEBHOOK_ENABLED in .env or the environment instead, which the adapter reads as a boolean (it overrides the file)`,
    );
    // No variable sets another key: only the value itself is advised.
    expect(refusal(webhook("    rate_limit: ${RL}\n"), "RL=5\n")).toMatch(
      /write the value itself in the file$/,
    );
  });

  it("a size, duration or rate with its unit: write the plain number it means", () => {
    expect(refusal(webhook("    max_body_bytes: 1mb\n"))).toBe(
      'FILE: platforms.webhook.max_body_bytes: expected a number, got "1mb" — write 1048576 (a number of bytes, without a unit)',
    );
    // The number it means would be refused next, past the largest body: the largest is what to write.
    expect(refusal(webhook("    max_body_bytes: 512mb\n"))).toBe(
      'FILE: platforms.webhook.max_body_bytes: expected a number, got "512mb" — write at most 268435456 (a number of bytes, without a unit: 512mb is 536870912, past the largest body svc takes, 256 MiB)',
    );
    expect(refusal(webhook("    script_timeout_seconds: 2m\n"))).toBe(
      'FILE: platforms.webhook.script_timeout_seconds: expected a number, got "2m" — write 120 (a number of seconds, without a unit)',
    );
    expect(
      refusal(webhook("    routes:\n      a: {secret: s, coalesce: {key: n, window_seconds: 45s}}\n")),
    ).toBe(
      'FILE: platforms.webhook.routes.a.coalesce.window_seconds: expected a number, got "45s" — write 45 (a number of seconds, without a unit)',
    );
    expect(refusal(webhook("    rate_limit: 60/min\n"))).toBe(
      'FILE: platforms.webhook.rate_limit: expected a number, got "60/min" — write 60 (rate_limit counts requests per minute)',
    );
    // A unit it cannot convert keeps the general advice.
    expect(refusal(webhook("    max_body_bytes: lots\n"))).toBe(
      'FILE: platforms.webhook.max_body_bytes: expected a number, got "lots" — write a plain number, without units or quotes',
    );
  });

  it("events: push (a string for a list) shows the list to write", () => {
    expect(refusal(webhook("    routes:\n      gh: {secret: s, events: pull_request}\n"))).toBe(
      'FILE: platforms.webhook.routes.gh.events: expected a list, got "pull_request" — write a list: [pull_request]',
    );
  });

  it("filters: x (text) shows a list of filters, not [x], a list of text that is no filter either", () => {
    expect(refusal(webhook("    routes:\n      gh: {secret: s, filters: action}\n"))).toBe(
      'FILE: platforms.webhook.routes.gh.filters: expected a list, got "action" — filters is a list of filters, each a field and one operator: filters: [{field: action, in: [opened, reopened]}]',
    );
  });

  it("a filter written as text (filters: [action], all: [draft], not: a b) shows a filter", () => {
    const message = refusal(
      webhook("    routes:\n      gh: {secret: s, filters: [action, {all: [draft]}, {not: a b}]}\n"),
    );
    expect(message).toContain(
      'FILE: platforms.webhook.routes.gh.filters[0]: expected a mapping, got "action" — a filter is a field and one operator: {field: action, exists: true}',
    );
    expect(message).toContain(
      'FILE: platforms.webhook.routes.gh.filters[1].all[0]: expected a mapping, got "draft" — a filter is a field and one operator: {field: draft, exists: true}',
    );
    expect(message).toContain(
      'FILE: platforms.webhook.routes.gh.filters[2].not: expected a mapping, got "a b" — a filter is a field and one operator: {field: action, exists: true}',
    );
  });

  it("a secret written as a list (secret: [old, new], for a rotation) says a route checks one, never quoting them", () => {
    const hint =
      "expected a string, got a list (not shown: the key holds a secret) — a route checks one secret: write the one the sender signs with (to change it without refused deliveries, see docs/webhook-auth.md, Rotating a secret)";
    expect(refusal(webhook("    routes:\n      gh: {secret: [old-s3cret, new-s3cret]}\n"))).toBe(
      `FILE: platforms.webhook.routes.gh.secret: ${hint}`,
    );
    expect(refusal(webhook("    secret: [old-s3cret, new-s3cret]\n"))).toBe(
      `FILE: platforms.webhook.secret: ${hint}`,
    );
    const parsed = parseSubscription("subs.json", "gh", { secret: ["old-s3cret", "new-s3cret"] });
    expect(parsed.ok ? [] : parsed.problems).toEqual([`subs.json: gh.secret: ${hint}`]);
  });

  it("enabled: 1 (or 0), which YAML reads as a number, says to write true or false", () => {
    expect(refusal(webhook("    enabled: 1\n"))).toBe(
      "FILE: platforms.webhook.enabled: expected true or false, got 1 — write true or false (YAML reads 1 and 0 as numbers; WEBHOOK_ENABLED in .env or the environment takes 1 and 0)",
    );
    expect(refusal(webhook("    routes:\n      gh: {secret: s, deliver_only: 0}\n"))).toBe(
      "FILE: platforms.webhook.routes.gh.deliver_only: expected true or false, got 0 — write true or false (YAML reads 1 and 0 as numbers)",
    );
    const parsed = parseSubscription("subs.json", "gh", { secret: "s", mirror_to_session: 1 });
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      "subs.json: gh.mirror_to_session: expected true or false, got 1 — write true or false (JSON's 1 and 0 are numbers)",
    ]);
  });

  it("a fractional port names a whole number, not zod's 'int'", () => {
    expect(refusal(webhook("    port: 8644.5\n"))).toBe(
      "FILE: platforms.webhook.port: expected a whole number, got 8644.5 — write a port from 0 to 65535 (0 picks a free one)",
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

  it("a key indented past the key above it is named at its own line, with the column it belongs at", () => {
    // The parser reports it at the line above ("Nested mappings are not allowed in compact mappings"),
    // whose text is fine; the secret on that line is not quoted.
    const message = refusal(
      webhook("    routes:\n      gh:\n        secret: sec-HHH888\n          events: [push]\n"),
    );
    expect(message).toBe(
      "FILE: line 6: not valid YAML — events is indented further than secret on line 5 above it, so YAML reads the line as more of secret's value — write events: at the column of secret: (column 9), or, if the line is part of the value, put the value in quotes",
    );
    // A ": " in the value on its own line keeps its own advice.
    expect(refusal(webhook("    routes:\n      gh:\n        prompt: New PR: {x}\n"))).toContain(
      "put the value in quotes: prompt: 'New PR: {x}'",
    );
  });

  it("a key indented less than the keys above it, but past their parent, is named with their column", () => {
    expect(refusal(webhook("    enabled: true\n   port: 8644\n"))).toBe(
      "FILE: line 4: not valid YAML — port is indented less than enabled on line 3 above it, but more than the key that holds them — write port: at the column of enabled: (column 5), or at its parent's column if it belongs there",
    );
    // The mapping it broke off from, not a deeper one just above it.
    expect(refusal(webhook("    routes:\n      gh:\n        secret: x\n   port: 1\n"))).toMatch(
      /^FILE: line 6: not valid YAML — port is indented less than routes on line 3 above it, .* \(column 5\)/,
    );
  });

  it("a key of a list item indented between its - and the item's keys (a filter's operator one column short) is named with their column", () => {
    const filters = (body: string) =>
      webhook(`    routes:\n      a:\n        secret: x\n        filters:\n${body}`);
    expect(refusal(filters("          - field: action\n           in: [opened]\n"))).toBe(
      "FILE: line 8: not valid YAML — in is indented less than field on line 7 above it, but more than its - — write in: at the column of field: (column 13) to keep it in that item, or start a new item with - at column 11",
    );
    // The item it broke off from, past the keys of earlier items.
    expect(
      refusal(
        filters(
          "          - field: action\n            in: [opened]\n          - field: b\n           exists: true\n",
        ),
      ),
    ).toBe(
      "FILE: line 10: not valid YAML — exists is indented less than field on line 9 above it, but more than its - — write exists: at the column of field: (column 13) to keep it in that item, or start a new item with - at column 11",
    );
  });

  it("a - indented past the item above it, which YAML folds into that item's text (events push - pull_request), is named at its line", () => {
    expect(
      refusal(
        webhook(
          "    routes:\n      a:\n        secret: x\n        events:\n          - push\n            - pull_request\n",
        ),
      ),
    ).toBe(
      "FILE: line 8: platforms.webhook.routes.a.events: this - is indented further than the - of the item above it (line 7, column 11), so YAML reads the line as more of that item's text, not as an item of its own — write each - of the list at column 11",
    );
    // No item is quoted: an MCP server's arguments may hold a key.
    const args = refusal(
      "mcp_servers:\n  a:\n    command: node\n    args:\n      - --api-key=sk-leak-AAA\n        - --port\n",
    );
    expect(args).toContain("FILE: line 6: mcp_servers.a.args: this - is indented further");
    expect(args).not.toContain("sk-leak");
    // An event type with spaces on one line is one item, as written.
    const h = tempHome();
    home = h;
    h.write(
      "config.yaml",
      webhook(
        "    routes:\n      a:\n        secret: x\n        events:\n          - Merge Request Hook\n          - push\n",
      ),
    );
    expect(loadConfig({ home: h.dir, env: {} }).config.platforms.webhook.routes.a?.events).toEqual([
      "Merge Request Hook",
      "push",
    ]);
  });

  it("a - indented less than the item above it, but past the key that holds the list, is named with the list's column", () => {
    expect(
      refusal(
        webhook(
          "    routes:\n      a:\n        secret: x\n        events:\n          - push\n         - pull_request\n",
        ),
      ),
    ).toBe(
      "FILE: line 8: not valid YAML — this - is indented less than the - of the item above it (line 7, column 11), but more than the key that holds the list — write each - of the list at column 11",
    );
    // The list it broke off from, not a list nested in one of its items.
    expect(
      refusal(
        webhook(
          "    routes:\n      a:\n        secret: x\n        filters:\n          - field: a\n            in:\n              - x\n         - field: b\n           exists: true\n",
        ),
      ),
    ).toBe(
      "FILE: line 10: not valid YAML — this - is indented less than the - of the item above it (line 7, column 11), but more than the key that holds the list — write each - of the list at column 11",
    );
  });

  it("a quoted value with text after its closing quote says to quote the whole value (a ' inside doubled)", () => {
    expect(refusal(webhook('    routes:\n      gh:\n        prompt: "Review" this PR\n'))).toBe(
      `FILE: line 5: not valid YAML — Unexpected scalar at node end at line 5, column 26 — a value that starts with a " ends at the next ", so the text after it is not part of the value: write prompt: '"Review" this PR'`,
    );
    expect(refusal(webhook("    routes:\n      gh:\n        prompt: 'it's broken'  # note\n"))).toBe(
      "FILE: line 5: not valid YAML — Unexpected scalar at node end at line 5, column 21 — a value that starts with a ' ends at the next ', so the text after it is not part of the value (inside 'single quotes' a ' is written twice: ''): write prompt: 'it''s broken'",
    );
    // A secret is not written back.
    const secret = refusal(webhook('    routes:\n      gh:\n        secret: "sec-LLL111"tail\n'));
    expect(secret).toContain("write secret: '<the value>' (not shown: the key holds a secret)");
    expect(secret).not.toContain("LLL111");
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

  it("a comma left out between two entries of a {mapping} on one line names the key after it, never the value before it", () => {
    expect(
      refusal(
        webhook(
          "    routes:\n      a:\n        secret: x\n        filters: [{field: action in: [opened]}]\n",
        ),
      ),
    ).toBe(
      'FILE: line 6: not valid YAML — Block collections are not allowed within flow collections at line 6, column 27 — a comma is missing before in: inside a {mapping} written on one line, entries are separated by commas ({…, in: …}), so YAML read "in:" as part of the value before it',
    );
    const secret = refusal(webhook("    routes:\n      a: {secret: s3cret-value events: [push]}\n"));
    expect(secret).toContain("a comma is missing before events:");
    expect(secret).not.toContain("s3cret-value");
    // A ": " that is part of the value: quote it.
    expect(refusal(webhook("    routes:\n      a: {secret: x, prompt: New PR: x}\n"))).toMatch(
      /column 30 — inside a \{mapping\} written on one line, a ": " in a value starts another key: put the value in quotes, or add the comma missing between two entries$/,
    );
  });

  it("a bracket of the other kind, or one too many, on the line of a [list or {mapping is named, not taken for a line break", () => {
    // A filter's mapping closed with ] (nested brackets on one line are where filters are written).
    expect(
      refusal(webhook("    routes:\n      a:\n        filters: [{field: action, in: [opened]]}]\n")),
    ).toBe(
      "FILE: line 5: not valid YAML — the { that opens a mapping at line 5, column 19 meets a ] at column 47 before its } — a [ is closed by ] and a { by }: remove the stray ], or close the mapping with } before it",
    );
    // One ] too many inside a route written on one line.
    expect(refusal(webhook("    routes:\n      a: {secret: x, events: [push]]}\n"))).toBe(
      "FILE: line 4: not valid YAML — the { that opens a mapping at line 4, column 10 meets a ] at column 36 before its } — a [ is closed by ] and a { by }: remove the stray ], or close the mapping with } before it",
    );
    // A list closed with }.
    expect(refusal(webhook("    routes:\n      a: {secret: x, events: [push}\n"))).toBe(
      "FILE: line 4: not valid YAML — the [ that opens a list at line 4, column 30 meets a } at column 35 before its ] — a [ is closed by ] and a { by }: remove the stray }, or close the list with ] before it",
    );
    // A closing bracket with nothing open before it.
    expect(refusal(webhook("    routes:\n      a: {secret: x}}\n"))).toBe(
      'FILE: line 4: not valid YAML — Unexpected flow-map-end token in YAML stream: "}" at line 4, column 21 — this } closes nothing: remove it, or add the { it was meant to close',
    );
    expect(refusal(webhook("    routes:\n      a:\n        events: [push]]\n"))).toBe(
      'FILE: line 5: not valid YAML — Unexpected flow-seq-end token in YAML stream: "]" at line 5, column 23 — this ] closes nothing: remove it, or add the [ it was meant to close',
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

describe("a secret that starts with # (unquoted, YAML reads a comment)", () => {
  it("is refused at its line, not taken for no secret (the global one, or a missing one), and never quoted", () => {
    const message = refusal(
      webhook("    secret: glob-secret-1\n    routes:\n      gh:\n        secret: #Xy7Tk9q\n"),
    );
    expect(message).toBe(
      "FILE: line 6: platforms.webhook.routes.gh.secret: YAML read no value: a # after a space starts a comment, so the secret written after it was dropped (not shown: the key holds a secret) — put it in quotes: secret: '<the value>'",
    );
    expect(refusal("agent:\n  provider: openai\n  model: gpt-4.1-mini\n  api_key: #sk-Xy7Tk9q\n")).toBe(
      "FILE: line 4: agent.api_key: YAML read no value: a # after a space starts a comment, so the secret written after it was dropped (not shown: the key holds a secret) — put it in quotes: api_key: '<the value>'",
    );
  });

  it("each such line is named in one pass: two routes' secrets and a prompt cut by a #, three lines", () => {
    const message = refusal(
      webhook(
        "    routes:\n      gh:\n        secret: #Xy7Tk9q\n      gl:\n        secret: #Ab3Cd4e\n        prompt: PR #{number}\n",
      ),
    );
    expect(message.split("\n").map((line) => line.slice(0, line.indexOf(": YAML read")))).toEqual([
      "FILE: line 5: platforms.webhook.routes.gh.secret",
      "FILE: line 7: platforms.webhook.routes.gl.secret",
      "FILE: line 8: platforms.webhook.routes.gl.prompt",
    ]);
  });

  it("a comment that starts with a space is one (secret:   # set in .env): the key counts as absent", () => {
    expect(() =>
      refusal(webhook("    routes:\n      gh:\n        secret:   # ${GH_SECRET}\n        events: [push]\n")),
    ).toThrow("loaded without an error");
  });
});

describe("a plain value that starts with a character YAML reserves (@, a backquote, %)", () => {
  const route = (lines: string) =>
    refusal(webhook(`    routes:\n      gh:\n        secret: s\n        deliver: log\n${lines}`));
  it("is told to be quoted, written back (a Telegram channel's @name, a login), at its line or inside a {...}", () => {
    expect(route("        deliver_extra:\n          chat_id: @mychannel  # the channel\n")).toBe(
      "FILE: line 8: not valid YAML — Plain value cannot start with reserved character @ at line 8, column 20 — YAML reserves @ at the start of a value: put the value in quotes: chat_id: '@mychannel'",
    );
    expect(route("        filters:\n          - {field: sender.login, equals: @octocat}\n")).toBe(
      "FILE: line 8: not valid YAML — Plain value cannot start with reserved character @ at line 8, column 43 — YAML reserves @ at the start of a value: put the value in quotes: equals: '@octocat'",
    );
    expect(route("        events:\n          - `push`\n")).toBe(
      "FILE: line 8: not valid YAML — Plain value cannot start with reserved character ` at line 8, column 13 — YAML reserves ` at the start of a value: put the item in quotes",
    );
  });

  it("a secret's is not written back", () => {
    const message = refusal(webhook("    routes:\n      gh:\n        secret: %Xy7Tk9q\n"));
    expect(message).toBe(
      "FILE: line 5: not valid YAML — Plain value cannot start with directive indicator character % at line 5, column 17 — YAML reserves % at the start of a value: put the value in quotes: secret: '<the value>' (not shown: the key holds a secret)",
    );
    expect(refusal(webhook("    routes: {gh: {secret: @Xy7Tk9q}}\n"))).not.toContain("Xy7");
  });
});

describe("a {template} written without quotes", () => {
  it("YAML made it a mapping: the refusal says to quote it, with the value written back in quotes", () => {
    const message = refusal(
      webhook(
        "    routes:\n      gh:\n        secret: s\n        prompt: {pull_request.title}\n        deliver: telegram\n        deliver_extra:\n          chat_id: {chat.id}\n          thread_id: {a, b}\n        coalesce:\n          key: {pull_request.number}\n      ci:\n        secret: {abc}\n",
      ),
    );
    expect(message.split("\n")).toEqual([
      `FILE: platforms.webhook.routes.gh.prompt: expected a string, got {"pull_request.title":null} — YAML reads a value that starts with { as a mapping: put the template in quotes: prompt: '{pull_request.title}'`,
      "FILE: platforms.webhook.routes.gh.deliver_extra.chat_id: expected text (a {template}), a number or true/false — YAML reads a value that starts with { as a mapping: put the template in quotes: chat_id: '{chat.id}'",
      "FILE: platforms.webhook.routes.gh.deliver_extra.thread_id: expected text (a {template}), a number or true/false — YAML reads a value that starts with { as a mapping: put the template in quotes",
      `FILE: platforms.webhook.routes.gh.coalesce.key: expected a string, got {"pull_request.number":null} — YAML reads a value that starts with { as a mapping: put the template in quotes: key: '{pull_request.number}'`,
      // A secret is neither quoted back nor called a template.
      "FILE: platforms.webhook.routes.ci.secret: expected a string, got a mapping (not shown: the key holds a secret) — YAML reads a value that starts with { as a mapping: put the value in quotes",
    ]);
  });

  it("text after the } makes the line invalid YAML: the parser's words get the same hint", () => {
    const route = (prompt: string) =>
      refusal(webhook(`    routes:\n      gh:\n        secret: s\n        prompt: ${prompt}\n`));
    expect(route("{pull_request.title} was opened  # a comment")).toBe(
      "FILE: line 6: not valid YAML — Unexpected scalar at node end at line 6, column 38 — YAML reads a value that starts with { as a mapping: put the template in quotes: prompt: '{pull_request.title} was opened'",
    );
    expect(route("{number}, it's #{id}")).toMatch(
      /put the template in quotes: prompt: '\{number\}, it''s #\{id\}'$/,
    );
    expect(route("{a}{b}")).toMatch(/put the template in quotes: prompt: '\{a\}\{b\}'$/);
    // Other characters YAML gives a meaning at the start of a value: [ (a list), @, *, ...
    expect(route("[{repository.name}] {issue.title}")).toMatch(
      / — YAML reads a value that starts with \[ as a list: put the template in quotes: prompt: '\[\{repository.name\}\] \{issue.title\}'$/,
    );
    expect(route("@{user} pinged")).toBe(
      "FILE: line 6: not valid YAML — Plain value cannot start with reserved character @ at line 6, column 17 — YAML gives a value that starts with @ a meaning of its own: put the template in quotes: prompt: '@{user} pinged'",
    );
    expect(refusal(webhook("    routes:\n      gh:\n        secret: s\n        prompt: [ALERT]\n"))).toBe(
      `FILE: platforms.webhook.routes.gh.prompt: expected a string, got ["ALERT"] — YAML reads a value that starts with [ as a list: put the template in quotes: prompt: '[ALERT]'`,
    );
    // A list followed by text holds no placeholder: the parser's words alone.
    expect(refusal(webhook("    routes:\n      gh:\n        secret: s\n        events: [push] x\n"))).toBe(
      "FILE: line 6: not valid YAML — Unexpected scalar at node end at line 6, column 24",
    );
    // A template inside a {flow: mapping}: quoting the whole mapping would be wrong, so the parser's words alone.
    expect(
      refusal(
        webhook("    routes:\n      gh:\n        secret: s\n        deliver_extra: {chat_id: {chat.id} x}\n"),
      ),
    ).toBe("FILE: line 6: not valid YAML — Unexpected scalar at node end at line 6, column 44");
    // A mapping followed by text is not a template: the parser's words alone.
    expect(route("{chat_id: 1} x")).toBe(
      "FILE: line 6: not valid YAML — Unexpected scalar at node end at line 6, column 30",
    );
  });
});

describe('a value holding ": " written unquoted', () => {
  it("is refused by the parser as a nested mapping: the hint says so, with the value quoted", () => {
    expect(
      refusal(
        webhook(
          "    routes:\n      gh:\n        secret: s\n        prompt: New PR: {pull_request.title}  # c\n",
        ),
      ),
    ).toBe(
      "FILE: line 6: not valid YAML — Nested mappings are not allowed in compact mappings at line 6, column 17 — a \": \" inside a value starts another key in YAML: put the value in quotes: prompt: 'New PR: {pull_request.title}'",
    );
  });
});

describe("a regex pattern written unquoted", () => {
  const pattern = (value: string) =>
    refusal(
      webhook(
        `    routes:\n      gh:\n        secret: s\n        filters:\n          - field: x\n            regex: ${value}\n`,
      ),
    );

  it("starting with [ or { (a list or mapping to YAML) is refused saying to quote the pattern", () => {
    expect(pattern("[A-Z]+-[0-9]+")).toBe(
      "FILE: line 8: not valid YAML — Unexpected scalar at node end at line 8, column 25 — YAML reads a value that starts with [ as a list: put the pattern in quotes: regex: '[A-Z]+-[0-9]+'",
    );
    expect(pattern("[A-Z]")).toBe(
      `FILE: platforms.webhook.routes.gh.filters[0].regex: expected a string, got ["A-Z"] — YAML reads a value that starts with [ as a list: put the pattern in quotes: regex: '[A-Z]'`,
    );
    expect(pattern("{3}")).toBe(
      `FILE: platforms.webhook.routes.gh.filters[0].regex: expected a string, got {"3":null} — YAML reads a value that starts with { as a mapping: put the pattern in quotes: regex: '{3}'`,
    );
  });

  it("inside a filter written as a {flow: mapping}, starting with [ or {, is refused saying to quote it there", () => {
    const flow = (filters: string) =>
      refusal(webhook(`    routes:\n      gh:\n        secret: s\n        filters: ${filters}\n`));
    // The parser stops at the text after the `]`, on the line of `filters:`: the advice is the pattern's.
    expect(flow("[{field: x, regex: [A-Z]+-[0-9]+}]")).toBe(
      "FILE: line 6: not valid YAML — Unexpected scalar at node end at line 6, column 42 — YAML reads a value that starts with [ as a list: put the pattern in quotes, inside the {...} too: regex: '<the pattern>'",
    );
    // Never the whole list quoted as if it were a template (the `{3}` looked like a placeholder).
    expect(flow("[{field: x, regex: '^v'}, {field: y, regex: {3}x}]")).toBe(
      "FILE: line 6: not valid YAML — Unexpected scalar at node end at line 6, column 65 — YAML reads a value that starts with { as a mapping: put the pattern in quotes, inside the {...} too: regex: '<the pattern>'",
    );
  });

  it("starting with ! (a tag YAML drops from the value) or * (an alias) is refused at its line", () => {
    // `!wip fix` read as the pattern `fix`, without a word.
    expect(pattern("!wip fix")).toBe(
      "FILE: line 8: !wip at the start of a value is a YAML tag, which YAML drops from the value — put the value in quotes: regex: '!wip fix'",
    );
    expect(pattern("*.md  # markdown")).toBe(
      "FILE: line 8: not valid YAML — Unresolved alias (the anchor must be set before the alias): .md — a value that starts with * names an anchor (&name) to YAML — put the value in quotes: regex: '*.md'",
    );
    // Inside a {flow: mapping} the tag is named, with no line to copy (quoting the mapping would be wrong).
    expect(
      refusal(
        webhook(
          "    routes:\n      gh:\n        secret: s\n        filters: [{field: x, regex: !wip fix}]\n",
        ),
      ),
    ).toBe(
      "FILE: line 6: !wip at the start of a value is a YAML tag, which YAML drops from the value — put the value in quotes",
    );
    // A prompt too: `!urgent deploy {x}` was the prompt `deploy {x}`.
    expect(
      refusal(webhook("    routes:\n      gh:\n        secret: s\n        prompt: !urgent deploy {x}\n")),
    ).toBe(
      "FILE: line 6: !urgent at the start of a value is a YAML tag, which YAML drops from the value — put the value in quotes: prompt: '!urgent deploy {x}'",
    );
  });
});

describe("a template cut short by a YAML comment", () => {
  const route = (lines: string) => webhook(`    routes:\n      gh:\n        secret: s\n${lines}`);

  it("prompt: PR #{number} unquoted read as PR: refused, naming what was dropped and the quoted value", () => {
    expect(refusal(route("        prompt: Review PR #{number} opened  \n"))).toBe(
      `FILE: line 6: platforms.webhook.routes.gh.prompt: YAML read only "Review PR": a # after a space starts a comment, so "#{number} opened" was dropped — put the template in quotes: prompt: 'Review PR #{number} opened'`,
    );
    // Nothing before the #: no prompt at all, which would have been the payload dump.
    expect(refusal(route("        prompt: #{number}\n"))).toBe(
      `FILE: line 6: platforms.webhook.routes.gh.prompt: YAML read no value: a # after a space starts a comment, so "#{number}" was dropped — put the template in quotes: prompt: '#{number}'`,
    );
    // With nothing before the #, any #word: a Slack channel as the chat.
    expect(
      refusal(route("        deliver: slack\n        deliver_extra:\n          chat_id: #general\n")),
    ).toBe(
      `FILE: line 8: platforms.webhook.routes.gh.deliver_extra.chat_id: YAML read no value: a # after a space starts a comment, so "#general" was dropped — put the template in quotes: chat_id: '#general'`,
    );
    expect(
      refusal(
        route("        deliver: telegram\n        deliver_extra:\n          chat_id: chat #{chat.id}\n"),
      ),
    ).toBe(
      `FILE: line 8: platforms.webhook.routes.gh.deliver_extra.chat_id: YAML read only "chat": a # after a space starts a comment, so "#{chat.id}" was dropped — put the template in quotes: chat_id: 'chat #{chat.id}'`,
    );
  });

  it("a filter's value that starts with # (a Slack channel, an issue ref) read as null: refused", () => {
    expect(
      refusal(route("        filters:\n          - field: channel\n            equals: #general\n")),
    ).toBe(
      `FILE: line 8: platforms.webhook.routes.gh.filters[0].equals: YAML read no value: a # after a space starts a comment, so "#general" was dropped — put the value in quotes: equals: '#general'`,
    );
    expect(
      refusal(
        route(
          "        filters:\n          - field: channel\n            in:\n              - random\n              - #general\n",
        ),
      ),
    ).toBe(
      `FILE: line 10: platforms.webhook.routes.gh.filters[0].in[1]: YAML read no value: a # after a space starts a comment, so "#general" was dropped — put the value in quotes: - '#general'`,
    );
  });

  it("a comment that is a comment is left alone: other text after #, a quoted value, a line of its own", () => {
    const h = tempHome();
    home = h;
    h.write(
      "config.yaml",
      route(
        "        prompt: Review PR # the number comes later\n        deliver: log\n        filters:\n          - field: x\n            equals: y  #z\n      ci:\n        secret: s\n        prompt: 'PR' #{number}\n        events: [push] #{x}\n      cd:\n        secret: s\n        prompt: deploy\n          #{not this}\n",
      ),
    );
    const routes = loadConfig({ home: h.dir, env: {} }).config.platforms.webhook.routes;
    expect([routes.gh?.prompt, routes.ci?.prompt, routes.cd?.prompt]).toEqual(["Review PR", "PR", "deploy"]);
    expect(routes.gh?.filters).toEqual([{ field: "x", equals: "y" }]);
  });
});

describe("a list written in braces", () => {
  it("is a mapping of null values to YAML: the refusal writes the list back in square brackets", () => {
    const message = refusal(
      webhook(
        "    routes:\n      gh:\n        secret: s\n        events: {push, Merge Request Hook}\n        skills: {review}\n        toolsets: {'a,b'}\n        filters:\n          - {field: action, in: {opened, closed}}\n",
      ),
    );
    expect(message.split("\n")).toEqual([
      'FILE: platforms.webhook.routes.gh.events: expected a list, got {"push":null,"Merge Request Hook":null} — a list is written in square brackets: events: [push, Merge Request Hook]',
      'FILE: platforms.webhook.routes.gh.filters[0].in: expected a list, got {"opened":null,"closed":null} — a list is written in square brackets: in: [opened, closed]',
      'FILE: platforms.webhook.routes.gh.skills: expected a list, got {"review":null} — a list is written in square brackets: skills: [review]',
      // An item a flow list would read otherwise is not written back.
      'FILE: platforms.webhook.routes.gh.toolsets: expected a list, got {"a,b":null} — a list is written in square brackets, not braces',
    ]);
  });
});

describe("coalesce written in another form", () => {
  it("a bare key path says to write the mapping; a missing key says what it names", () => {
    expect(refusal(webhook("    routes:\n      r: {secret: s, coalesce: pull_request.number}\n"))).toBe(
      'FILE: platforms.webhook.routes.r.coalesce: expected a mapping, got "pull_request.number" — write coalesce: {key: pull_request.number}',
    );
    // A template is quoted in the advice: unquoted, YAML reads {key: {repo}#{n}} as a mapping again.
    expect(
      refusal(
        webhook(
          '    routes:\n      r: {secret: s, coalesce: "{repository.full_name}#{pull_request.number}"}\n',
        ),
      ),
    ).toBe(
      'FILE: platforms.webhook.routes.r.coalesce: expected a mapping, got "{repository.full_name}#{pull_request.number}" — write coalesce: {key: "{repository.full_name}#{pull_request.number}"}',
    );
    // An empty or blank text names no field: writing it as the key would be refused in turn.
    for (const blank of ['""', '"  "'])
      expect(refusal(webhook(`    routes:\n      r: {secret: s, coalesce: ${blank}}\n`))).toBe(
        `FILE: platforms.webhook.routes.r.coalesce: expected a mapping, got ${blank} — write coalesce: {key: <the payload path that names the entity, e.g. pull_request.number>}, or remove coalesce`,
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
      // @ starts no plain YAML text: the entry is quoted, so the hint can be pasted as it is.
      `FILE: mcp_servers.a.command: expected a string, got ["npx","-y","@scope/pkg"] — command is the program alone: write command: npx and args: [-y, "@scope/pkg"]`,
    );
    // A credential in the list is not quoted back.
    expect(mcp("[npx, -y, ctx7, --api-key, ak-4242-secret]")).toBe(
      "FILE: mcp_servers.a.command: expected a string, got a list (not shown: it may hold a credential) — command is the program alone: write command: npx and args: [the rest of the list]",
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

  it("a name holding a character no name may hold names it, with the name to write", () => {
    expect(
      refusal(
        webhook(
          "    routes:\n      git hub: {secret: s}\n      a/b: {secret: s}\n      ok: {secret: s, profile: 'work dir'}\n",
        ),
      ),
    ).toBe(
      [
        "FILE: platforms.webhook.routes.git hub: invalid name — route names use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit) — \" \" is not one of them: write git-hub",
        "FILE: platforms.webhook.routes.a/b: invalid name — route names use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit) — \"/\" is not one of them: write a-b",
        'FILE: platforms.webhook.routes.ok.profile: profile names use letters, digits, "_" and "-" (1-64, starting with a letter or digit) — " " is not one of them: write work-dir',
      ].join("\n"),
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
  it("a timestamp that is neither text nor a number says what it takes, as a cron job's does, not zod's 'Invalid input'", () => {
    expect(problems({ created_at: true, updated_at: { at: 1 } })).toEqual([
      "subs.json: gh.created_at: expected an ISO time as text (or a number, epoch), got true",
      'subs.json: gh.updated_at: expected an ISO time as text (or a number, epoch), got {"at":1}',
    ]);
  });
  it("is advised in JSON", () => {
    expect(problems({ events: "push" })).toEqual([
      'subs.json: gh.events: expected a list, got "push" — write a list: ["push"]',
    ]);
    expect(problems({ coalesce: "{repo.name}#{number}" })).toEqual([
      'subs.json: gh.coalesce: expected a mapping, got "{repo.name}#{number}" — write "coalesce": {"key": "{repo.name}#{number}"}',
    ]);
    expect(problems({ filters: "action" })).toEqual([
      'subs.json: gh.filters: expected a list, got "action" — filters is a list of filters, each a field and one operator: "filters": [{"field": "action", "in": ["opened", "reopened"]}]',
    ]);
    expect(problems({ filters: ["action"] })).toEqual([
      'subs.json: gh.filters[0]: expected a mapping, got "action" — a filter is a field and one operator: {"field": "action", "exists": true}',
    ]);
    expect(problems({ enabled: "yes" })).toEqual([
      'subs.json: gh.enabled: expected true or false, got "yes" — write true or false, without quotes',
    ]);
    expect(problems({ coalesce: { key: "a", window_seconds: "5" } })).toEqual([
      'subs.json: gh.coalesce.window_seconds: expected a number, got "5" — write the number without quotes',
    ]);
  });

  it("a duration written with its unit says the number of seconds to write, as in config.yaml, not to drop the quotes of 1m", () => {
    expect(problems({ coalesce: { key: "a", window_seconds: "1m", max_wait_seconds: "soon" } })).toEqual([
      'subs.json: gh.coalesce.window_seconds: expected a number, got "1m" — write 60 (a number of seconds, without a unit)',
      'subs.json: gh.coalesce.max_wait_seconds: expected a number, got "soon" — write a plain number, without units or quotes',
    ]);
  });

  it("gives the in: [] example in JSON", () => {
    expect(problems({ filters: [{ field: "action", in: [] }] })).toEqual([
      'subs.json: gh.filters[0].in: an empty list matches nothing — list the values, e.g. "in": ["opened", "reopened"]',
    ]);
  });
});

describe("a section or platform written as the one word of its main setting", () => {
  it("agent: openai and state: redis say to write the mapping with provider (backend); other text gets no such hint", () => {
    const on = "platforms: {webhook: {enabled: true}}\n";
    expect(refusal(`${on}agent: anthropic\n`)).toBe(
      'FILE: agent: expected a mapping, got "anthropic" — the agent section is a mapping of its settings: write agent: {provider: anthropic}',
    );
    expect(refusal(`${on}state: redis\n`)).toBe(
      'FILE: state: expected a mapping, got "redis" — the state section is a mapping of its settings: write state: {backend: redis}',
    );
    expect(refusal(`${on}agent: claude\n`)).toBe('FILE: agent: expected a mapping, got "claude"');
  });

  it("a platform written as true, enabled or off says to write the mapping with enabled", () => {
    expect(refusal("platforms:\n  webhook: true\n")).toBe(
      "FILE: platforms.webhook: expected a mapping, got true — a platform is a mapping of its settings: write webhook: {enabled: true}, its other keys beside enabled",
    );
    expect(refusal("platforms:\n  webhook: {enabled: true}\n  telegram: enabled\n")).toBe(
      'FILE: platforms.telegram: expected a mapping, got "enabled" — a platform is a mapping of its settings: write telegram: {enabled: true}, its other keys beside enabled',
    );
    expect(refusal("platforms:\n  webhook: off\n")).toBe(
      'FILE: platforms.webhook: expected a mapping, got "off" — a platform is a mapping of its settings: write webhook: {enabled: false}, its other keys beside enabled',
    );
    expect(refusal("platforms:\n  webhook: 5\n")).toBe("FILE: platforms.webhook: expected a mapping, got 5");
  });
});

describe("an empty list where a mapping goes", () => {
  it("routes: [], mcp_servers: [] or deliver_extra: [] say an empty mapping is written in braces", () => {
    expect(refusal(webhook("    enabled: true\n    routes: []\n"))).toBe(
      "FILE: platforms.webhook.routes: expected a mapping, got [] — an empty mapping is written in braces: routes: {} (or leave the key out)",
    );
    expect(refusal("platforms: {webhook: {enabled: true}}\nmcp_servers: []\n")).toBe(
      "FILE: mcp_servers: expected a mapping, got [] — an empty mapping is written in braces: mcp_servers: {} (or leave the key out)",
    );
    expect(refusal(webhook("    routes:\n      r: {secret: empty-list-secret, deliver_extra: []}\n"))).toBe(
      "FILE: platforms.webhook.routes.r.deliver_extra: expected a mapping, got [] — an empty mapping is written in braces: deliver_extra: {} (or leave the key out)",
    );
  });
});

describe("a delivery platform's id keys", () => {
  const platform = (body: string) => `platforms:\n${body}  webhook:\n    secret: s\n`;

  it("home_channel, phone_number_id or app_id written as a list or mapping says it takes text or a number, not zod's 'Invalid input'", () => {
    expect(refusal(platform("  telegram:\n    token: t\n    home_channel: [-100111, -100222]\n"))).toBe(
      "FILE: platforms.telegram.home_channel: expected text or a number (one chat, channel or address), got [-100111,-100222]",
    );
    expect(refusal(platform("  whatsapp:\n    token: t\n    phone_number_id: {id: 106540352242922}\n"))).toBe(
      'FILE: platforms.whatsapp.phone_number_id: expected text or a number (the phone number ID), got {"id":106540352242922}',
    );
    expect(refusal(platform("  qqbot:\n    client_secret: c\n    app_id: [102000001]\n"))).toBe(
      "FILE: platforms.qqbot.app_id: expected text or a number (the bot's AppID), got [102000001]",
    );
  });

  it("a WeCom agent_id that is no whole number is refused, not sent to WeCom as agentid null; an unset ${VAR} is named at start", () => {
    const wecom = (agentId: string) =>
      platform(
        `  wecom:\n    enabled: true\n    corp_id: ww01\n    corp_secret: s\n    agent_id: ${agentId}\n`,
      );
    expect(refusal(wecom("abc"))).toBe(
      "FILE: platforms.wecom.agent_id: not an AgentId — write the app's AgentId, the whole number WeCom's admin shows (agent_id: 1000002)",
    );
    expect(refusal(wecom("1000002.5"))).toBe(
      "FILE: platforms.wecom.agent_id: not an AgentId — write the app's AgentId, the whole number WeCom's admin shows (agent_id: 1000002)",
    );
    expect(refusal(wecom("[1000002]"))).toBe(
      "FILE: platforms.wecom.agent_id: expected a whole number (the app's AgentId), got [1000002]",
    );
    // An unset ${VAR} is named at start, as any enabled platform's setting is, not refused.
    const h = tempHome();
    home = h;
    const file = h.write("config.yaml", wecom("${WECOM_AGENT_ID}"));
    expect(unsetPlatformVariableWarnings(loadConfig({ home: h.dir, env: {} }).config, file)).toEqual([
      expect.stringContaining("platforms.wecom.agent_id: ${WECOM_AGENT_ID} is not set"),
    ]);
  });

  it("a WeCom agent_id written as a number, as quoted digits or from a ${VAR} is that number", () => {
    for (const [written, dotenv] of [
      ["1000002", undefined],
      ['"1000002"', undefined],
      ["${WECOM_AGENT_ID}", "WECOM_AGENT_ID=1000002\n"],
    ] as const) {
      const h = tempHome();
      home = h;
      h.write(
        "config.yaml",
        platform(
          `  wecom:\n    enabled: true\n    corp_id: ww01\n    corp_secret: s\n    agent_id: ${written}\n`,
        ),
      );
      if (dotenv !== undefined) h.write(".env", dotenv);
      expect(loadConfig({ home: h.dir, env: {} }).config.platforms.wecom?.agent_id).toBe(1000002);
      h.cleanup();
      home = undefined;
    }
  });
});

describe("deliver_extra written as something other than a mapping", () => {
  const route = (extra: string) =>
    refusal(
      webhook(
        `    routes:\n      gh:\n        secret: s\n        deliver: telegram\n        deliver_extra: ${extra}\n`,
      ),
    );

  it("key=value items (as --deliver-extra takes them) are written back as the mapping they mean", () => {
    expect(route("[chat_id=42, 'thread_id: 7']")).toBe(
      `FILE: platforms.webhook.routes.gh.deliver_extra: expected a mapping, got ["chat_id=42","thread_id: 7"] — deliver_extra maps each key to its value: write deliver_extra: {chat_id: 42, thread_id: 7}`,
    );
    expect(route("chat_id={chat.id}")).toBe(
      `FILE: platforms.webhook.routes.gh.deliver_extra: expected a mapping, got "chat_id={chat.id}" — deliver_extra maps each key to its value: write deliver_extra: {chat_id: "{chat.id}"}`,
    );
  });

  it("anything else gets the shape, with where the keys are listed", () => {
    expect(route("42")).toBe(
      "FILE: platforms.webhook.routes.gh.deliver_extra: expected a mapping, got 42 — deliver_extra maps each key to its value: write deliver_extra: {chat_id: <id>} (each target's keys: docs/delivery-targets.md)",
    );
  });

  it("in a subscription record the advice is JSON", () => {
    const parsed = parseSubscription("subs.json", "gh", { secret: "s", deliver_extra: ["chat_id=42"] });
    expect(parsed.ok ? [] : parsed.problems).toEqual([
      'subs.json: gh.deliver_extra: expected a mapping, got ["chat_id=42"] — deliver_extra maps each key to its value: write "deliver_extra": {"chat_id": "42"}',
    ]);
  });
});

describe("a route key written in the wrong shape says what to write", () => {
  const route = (line: string) =>
    refusal(webhook(`    routes:\n      gh:\n        secret: s\n        ${line}\n`)).replace(
      "FILE: platforms.webhook.routes.gh.",
      "",
    );

  it("one value written as a list of one is written back alone; a list of more takes one", () => {
    expect(route("deliver: [log]")).toBe(
      'deliver: expected a string, got ["log"] — one value, not a list: write deliver: log',
    );
    expect(route("script: [check.py]")).toBe(
      'script: expected a string, got ["check.py"] — one value, not a list: write script: check.py',
    );
    expect(route("deliver: [telegram, slack]")).toBe(
      'deliver: expected a string, got ["telegram","slack"] — deliver takes one value, not a list',
    );
    // A list inside a list is no key written as a list: no "write 0: push".
    expect(route("events: [[push]]")).not.toContain("write 0");
    expect(route("coalesce: {key: a, window_seconds: [10]}")).toBe(
      "coalesce.window_seconds: expected a number, got [10] — one value, not a list: write window_seconds: 10",
    );
  });

  it("coalesce written as true or a list gets the mapping to write", () => {
    expect(route("coalesce: [pull_request.number]")).toBe(
      'coalesce: expected a mapping, got ["pull_request.number"] — write coalesce: {key: pull_request.number}',
    );
    expect(route("coalesce: true")).toBe(
      "coalesce: expected a mapping, got true — write coalesce: {key: <the payload path that names the entity, e.g. pull_request.number>}, or remove coalesce",
    );
  });
});

describe("an empty value is one problem, said as empty", () => {
  it("a web_search api_key empty, or a variable set empty, is not also called blank (spaces only)", () => {
    const written = refusal("tools:\n  web_search: {backend: brave, api_key: ''}\n");
    expect(written).toBe(
      "FILE: tools.web_search.api_key: must not be empty — write a value, or leave the key out",
    );
    expect(refusal("tools:\n  web_search: {backend: brave, api_key: '   '}\n")).toBe(
      "FILE: tools.web_search.api_key: blank (spaces only) — write the backend's key",
    );
  });

  it("a route's profile set to an empty value by its variable names the variable, not a name's rules", () => {
    const message = refusal(webhook(`    routes:\n      a: {secret: s, profile: "$\{P}"}\n`), "P=\n");
    expect(message).toContain(
      `FILE: platforms.webhook.routes.a.profile: must not be empty, but $\{P} gives an empty value`,
    );
    expect(message).not.toContain("profile names use letters");
  });
});

describe("a duration written with its unit past its key's range", () => {
  it("says the most to write, not a number the next load refuses", () => {
    expect(refusal("gateway:\n  drain_timeout_seconds: 2h\n")).toBe(
      'FILE: gateway.drain_timeout_seconds: expected a number, got "2h" — write at most 3600 (a number of seconds, without a unit: 2h is 7200, past the longest drain, 1 hour)',
    );
    expect(refusal("gateway:\n  drain_timeout_seconds: 2m\n")).toBe(
      'FILE: gateway.drain_timeout_seconds: expected a number, got "2m" — write 120 (a number of seconds, without a unit)',
    );
  });
});
