import { utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { githubExamplesOf } from "../../helpers/githubExamples.js";
import { postJson } from "../../helpers/http.js";

// The RE2 the filters run: re2js as src/streams/regex.ts requires it at the first pattern (its CommonJS build).
const { RE2JS } = createRequire(import.meta.url)("re2js") as typeof import("re2js");

const OPEN = "INSECURE_NO_AUTH";
const IGNORED = { status: 200, body: { status: "ignored", reason: "filter" } };
const ACCEPTED = { status: 202, body: { status: "accepted" } };

const route = (filters: unknown[]) => ({ secret: OPEN, filters });

describe("filters (spec 2.3) over HTTP", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: {
        "lists/users.json": JSON.stringify(["Codertocat", "octocat"]),
        "lists/repos.json": JSON.stringify({ "Codertocat/Hello-World": true }),
        "lists/blocked.json": '["mallory", "eve",]\n',
        "lists/labels.txt": "bug\nenhancement\n",
        // Saved on Windows: CRLF line ends, blank and indented lines, an entry starting with #.
        "lists/bots.txt": "#ops-bot\r\ndependabot[bot]\r\n\r\n  snyk-bot  \r\n",
      },
      config: webhookConfig(
        {
          pr_actions: {
            secret: OPEN,
            events: ["pull_request"],
            filters: [
              { field: "action", in: ["opened", "synchronize", "reopened"] },
              { field: "pull_request.draft", equals: false },
            ],
          },
          exists: route([{ field: "a.b", exists: true }]),
          not_exists: route([{ field: "a.b", exists: false }]),
          missing: route([{ field: "a.b", missing: true }]),
          equals: route([{ field: "n", equals: 3 }]),
          not_equals: route([{ field: "s", not_equals: "x" }]),
          contains_str: route([{ field: "s", contains: "ell" }]),
          contains_list: route([{ field: "l", contains: "b" }]),
          contains_dict: route([{ field: "d", contains: "k" }]),
          in_list: route([{ field: "s", in: ["a", "b"] }]),
          in_json: route([{ field: "sender.login", in_file: "lists/users.json" }]),
          in_keys: route([{ field: "repository.full_name", in_file: "lists/repos.json" }]),
          in_lines: route([{ field: "label", in_file: "lists/labels.txt" }]),
          not_bots: route([{ not: { field: "sender.login", in_file: "lists/bots.txt" } }]),
          regex: route([{ field: "s", regex: "^rel(ease)?-[0-9]+$" }]),
          evil_regex: route([{ field: "s", regex: "^(a+)+$" }]),
          all: route([
            {
              all: [
                { field: "a", equals: 1 },
                { field: "b", equals: 2 },
              ],
            },
          ]),
          any: route([
            {
              any: [
                { field: "a", equals: 1 },
                { field: "b", equals: 2 },
              ],
            },
          ]),
          not: route([{ not: { field: "a", equals: 1 } }]),
          by_event: route([{ field: "event", equals: "push" }]),
          by_event_type: route([{ field: "event_type", equals: "push" }]),
          by_header: route([{ field: "headers.X-Custom", equals: "yes" }]),
          wrapped: route([{ field: "payload.x", equals: 1 }]),
          lost_list: route([{ field: "s", in_file: "lists/absent.txt" }]),
          not_blocked: route([{ not: { field: "sender.login", in_file: "lists/blocked.json" } }]),
          composed: route([{ field: "s", equals: "caf\u00e9" }]),
          either_form: route([{ field: "s", regex: "^caf(\u00e9|e\\x{301})$" }]),
          any_case: route([{ field: "s", regex: "(?i)^\u00e9t\u00e9$" }]),
        },
        { rate_limit: 100_000 },
      ),
    });
  });
  afterAll(() => gw.stop());
  const post = (name: string, body: unknown, headers: Record<string, string> = {}) =>
    postJson(gw.url(`/webhooks/${name}`), body, headers);

  it("real GitHub pull_request payloads: only opened/synchronize/reopened non-draft PRs pass", async () => {
    let accepted = 0;
    for (const payload of githubExamplesOf("pull_request")) {
      const pr = payload.pull_request as { draft?: boolean };
      const expected =
        ["opened", "synchronize", "reopened"].includes(payload.action ?? "") && pr.draft === false;
      const res = await post("pr_actions", payload, { "X-GitHub-Event": "pull_request" });
      expect(res, `action ${payload.action}`).toMatchObject(expected ? ACCEPTED : IGNORED);
      if (expected) accepted += 1;
    }
    expect(accepted).toBeGreaterThan(0);
  });

  it("exists / missing", async () => {
    expect(await post("exists", { a: { b: null } })).toMatchObject(ACCEPTED);
    expect(await post("exists", { a: {} })).toMatchObject(IGNORED);
    expect(await post("not_exists", { a: {} })).toMatchObject(ACCEPTED);
    expect(await post("not_exists", { a: { b: 1 } })).toMatchObject(IGNORED);
    expect(await post("missing", {})).toMatchObject(ACCEPTED);
    expect(await post("missing", { a: { b: 0 } })).toMatchObject(IGNORED);
  });

  it("equals / not_equals", async () => {
    expect(await post("equals", { n: 3 })).toMatchObject(ACCEPTED);
    expect(await post("equals", { n: 4 })).toMatchObject(IGNORED);
    expect(await post("not_equals", { s: "y" })).toMatchObject(ACCEPTED);
    expect(await post("not_equals", { s: "x" })).toMatchObject(IGNORED);
  });

  it("text compares code point by code point, without Unicode normalization; regex can accept both forms, (?i) any case", async () => {
    expect(await post("composed", { s: "caf\u00e9" })).toMatchObject(ACCEPTED);
    // The same word with é written as e and a combining acute accent (U+0301), as macOS file names hold it.
    expect(await post("composed", { s: "cafe\u0301" })).toMatchObject(IGNORED);
    expect(await post("either_form", { s: "caf\u00e9" })).toMatchObject(ACCEPTED);
    expect(await post("either_form", { s: "cafe\u0301" })).toMatchObject(ACCEPTED);
    expect(await post("any_case", { s: "\u00c9T\u00c9" })).toMatchObject(ACCEPTED);
  });

  it("contains: substring, list member, dict key", async () => {
    expect(await post("contains_str", { s: "hello" })).toMatchObject(ACCEPTED);
    expect(await post("contains_str", { s: "help" })).toMatchObject(IGNORED);
    expect(await post("contains_list", { l: ["a", "b"] })).toMatchObject(ACCEPTED);
    expect(await post("contains_list", { l: ["a", "bb"] })).toMatchObject(IGNORED);
    expect(await post("contains_dict", { d: { k: 0 } })).toMatchObject(ACCEPTED);
    expect(await post("contains_dict", { d: { j: "k" } })).toMatchObject(IGNORED);
  });

  it("in: inline list", async () => {
    expect(await post("in_list", { s: "b" })).toMatchObject(ACCEPTED);
    expect(await post("in_list", { s: "c" })).toMatchObject(IGNORED);
  });

  it("in_file: JSON array, keys of a JSON object, lines of a text file (real GitHub payloads)", async () => {
    const opened = githubExamplesOf("pull_request").find((p) => p.action === "opened") as Record<
      string,
      unknown
    >;
    expect(await post("in_json", opened)).toMatchObject(ACCEPTED);
    expect(await post("in_json", { ...opened, sender: { login: "mallory" } })).toMatchObject(IGNORED);
    expect(await post("in_keys", opened)).toMatchObject(ACCEPTED);
    expect(await post("in_keys", { ...opened, repository: { full_name: "other/repo" } })).toMatchObject(
      IGNORED,
    );
    expect(await post("in_lines", { label: "enhancement" })).toMatchObject(ACCEPTED);
    expect(await post("in_lines", { label: "bug enhancement" })).toMatchObject(IGNORED);
  });

  it("in_file: a text list's CRLF line ends, blank lines and indentation are ignored; a # line is an entry", async () => {
    const from = (login: string) => ({ sender: { login } });
    expect(await post("not_bots", from("dependabot[bot]"))).toMatchObject(IGNORED);
    expect(await post("not_bots", from("snyk-bot"))).toMatchObject(IGNORED);
    expect(await post("not_bots", from("octocat"))).toMatchObject(ACCEPTED);
    expect(await post("not_bots", from(""))).toMatchObject(ACCEPTED);
    expect(await post("not_bots", from("#ops-bot"))).toMatchObject(IGNORED);
    expect(await post("not_bots", from("ops-bot"))).toMatchObject(ACCEPTED);
  });

  it("in_file: an unreadable list fails closed (ignored, not a 500)", async () => {
    expect(await post("lost_list", { s: "a" })).toMatchObject(IGNORED);
  });

  it("in_file: a .json blocklist with a syntax error (trailing comma) fails closed and is logged once as a WARN", async () => {
    expect(await post("not_blocked", { sender: { login: "mallory" } })).toMatchObject(IGNORED);
    expect(await post("not_blocked", { sender: { login: "octocat" } })).toMatchObject(IGNORED);
    await vi.waitFor(
      () => {
        const warnings = gw
          .logs()
          .filter((l) => l.msg.startsWith("[webhook] in_file list") && l.msg.includes("lists/blocked.json"));
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatchObject({ level: 40 });
        expect(warnings[0]?.msg).toMatch(/not valid JSON.*filters naming it do not match/);
      },
      { timeout: 10_000 },
    );
    writeFileSync(join(gw.home.dir, "lists/blocked.json"), '["mallory", "eve"]\n');
    expect(await post("not_blocked", { sender: { login: "octocat" } })).toMatchObject(ACCEPTED);
    expect(await post("not_blocked", { sender: { login: "eve" } })).toMatchObject(IGNORED);
  });

  it("in_file: a changed list file is picked up", async () => {
    expect(await post("in_lines", { label: "urgent" })).toMatchObject(IGNORED);
    const file = join(gw.home.dir, "lists/labels.txt");
    writeFileSync(file, "bug\nurgent\n");
    const later = new Date(Date.now() + 5000);
    utimesSync(file, later, later);
    expect(await post("in_lines", { label: "urgent" })).toMatchObject(ACCEPTED);
  });

  it("regex, and a catastrophic-backtracking pattern with a hostile payload is answered (RE2 does not backtrack)", async () => {
    expect(await post("regex", { s: "release-12" })).toMatchObject(ACCEPTED);
    expect(await post("regex", { s: "xrelease-12" })).toMatchObject(IGNORED);
    // A backtracking engine would never finish `^(a+)+$` on this payload (the test would hang until its
    // timeout); the gateway runs it through RE2, which matches in one pass.
    const hostile = `${"a".repeat(50_000)}!`;
    const re2 = vi.spyOn(RE2JS.prototype, "test");
    let ran: boolean;
    try {
      expect(await post("evil_regex", { s: hostile })).toMatchObject(IGNORED);
      ran = re2.mock.calls.some(([input]) => input === hostile);
    } finally {
      re2.mockRestore();
    }
    expect(ran).toBe(true);
  });

  it("all / any / not groups", async () => {
    expect(await post("all", { a: 1, b: 2 })).toMatchObject(ACCEPTED);
    expect(await post("all", { a: 1, b: 3 })).toMatchObject(IGNORED);
    expect(await post("any", { a: 0, b: 2 })).toMatchObject(ACCEPTED);
    expect(await post("any", { a: 0, b: 0 })).toMatchObject(IGNORED);
    expect(await post("not", { a: 2 })).toMatchObject(ACCEPTED);
    expect(await post("not", { a: 1 })).toMatchObject(IGNORED);
  });

  it("event / event_type read the resolved event type; headers.<Name> reads a request header", async () => {
    const push = githubExamplesOf("push")[0] as Record<string, unknown>;
    expect(await post("by_event", push, { "X-GitHub-Event": "push" })).toMatchObject(ACCEPTED);
    expect(await post("by_event", push, { "X-GitHub-Event": "issues" })).toMatchObject(IGNORED);
    expect(await post("by_event_type", { event_type: "push" })).toMatchObject(ACCEPTED);
    expect(await post("by_header", {}, { "X-Custom": "yes" })).toMatchObject(ACCEPTED);
    expect(await post("by_header", {}, { "X-Custom": "no" })).toMatchObject(IGNORED);
  });

  it("payload.x reads a top-level payload object when present, else the body root", async () => {
    expect(await post("wrapped", { payload: { x: 1 } })).toMatchObject(ACCEPTED);
    expect(await post("wrapped", { x: 1 })).toMatchObject(ACCEPTED);
    expect(await post("wrapped", { payload: { x: 2 }, x: 1 })).toMatchObject(IGNORED);
  });
});

describe("filters on 64-bit ids written unquoted in YAML", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      files: { "lists/guilds.json": "[42, 1234567890123456789012, 1.0]\n" },
      config: `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    secret: ${OPEN}
    routes:
      guild:
        filters:
          - field: guild_id
            equals: 1234567890123456789012
      guilds:
        filters:
          - field: guild_id
            in: [1234567890123456789012, 42]
      member:
        filters:
          - field: role_ids
            contains: 1234567890123456789012
      listed:
        filters:
          - field: guild_id
            in_file: lists/guilds.json
`,
    });
  });
  afterAll(() => gw.stop());
  const post = (name: string, body: string) => postJson(gw.url(`/webhooks/${name}`), body);

  it("equals / in / contains match the payload number with the same digits, and not its float neighbour", async () => {
    for (const route of ["guild", "guilds"]) {
      expect(await post(route, '{"guild_id": 1234567890123456789012}')).toMatchObject(ACCEPTED);
      // The same float, other digits: never equal.
      expect(await post(route, '{"guild_id": 1234567890123456789013}')).toMatchObject(IGNORED);
    }
    expect(await post("member", '{"role_ids": [7, 1234567890123456789012]}')).toMatchObject(ACCEPTED);
    expect(await post("member", '{"role_ids": [7, 1234567890123456789013]}')).toMatchObject(IGNORED);
  });

  it("in_file: a JSON list's 64-bit id matches only those digits; 1.0 in the list matches 1 and 1.0", async () => {
    expect(await post("listed", '{"guild_id": 1234567890123456789012}')).toMatchObject(ACCEPTED);
    expect(await post("listed", '{"guild_id": 1234567890123456789013}')).toMatchObject(IGNORED);
    expect(await post("listed", '{"guild_id": 1234567890123456800000}')).toMatchObject(IGNORED);
    expect(await post("listed", '{"guild_id": 1}')).toMatchObject(ACCEPTED);
    expect(await post("listed", '{"guild_id": 1.0}')).toMatchObject(ACCEPTED);
    expect(await post("listed", '{"guild_id": "42"}')).toMatchObject(ACCEPTED);
  });
});
