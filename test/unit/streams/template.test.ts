import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { renderExtra, renderTemplate } from "../../../src/streams/template.js";
import { githubExample } from "../../helpers/githubExamples.js";

const pr = githubExample("pull_request", "opened");
const push = githubExample("push");
const issues = githubExample("issues");

describe("renderTemplate (spec 2.5)", () => {
  it("rule 1: {a.b.c} resolves nested values of a real pull_request payload", () => {
    const text = renderTemplate(
      "PR #{number} {action}: {pull_request.title} by {pull_request.user.login} in {repository.full_name}",
      pr,
    );
    expect(text).toBe(
      `PR #${pr.number} opened: ${pr.pull_request.title} by ${pr.pull_request.user.login} in ${pr.repository.full_name}`,
    );
  });

  it("rule 1: numbers, booleans and null render as JSON text; array items by index", () => {
    const payload = { n: 2.5, t: true, f: false, z: null, list: ["a", "b"] };
    expect(renderTemplate("{n}|{t}|{f}|{z}|{list.1}", payload)).toBe("2.5|true|false|null|b");
    expect(renderTemplate("{issue.labels.0.name}", issues)).toBe(issues.issue.labels[0].name);
  });

  it("rule 1: any payload key resolves, not only ASCII words (@timestamp, título, $schema)", () => {
    const payload = {
      "@timestamp": "2026-11-22T12:00:00Z",
      título: "olá",
      $schema: "v1",
      "a-b": { "c:d": 1 },
    };
    expect(renderTemplate("{@timestamp} {título} {$schema} {a-b.c:d}", payload)).toBe(
      "2026-11-22T12:00:00Z olá v1 1",
    );
  });

  it("rule 1: a path is dot notation only: a key holding a dot cannot be named, brackets are part of a key, an index is plain digits", () => {
    const payload = {
      "a.b": 1,
      "commits[0]": "k",
      commits: [{ id: "c0" }, { id: "c1" }],
      payload: { x: 1 },
      y: 2,
    };
    expect(renderTemplate("{a.b}|{commits[0].id}|{commits[0]}|{commits.1.id}", payload)).toBe(
      "{a.b}|{commits[0].id}|k|c1",
    );
    expect(renderTemplate("{commits.-1.id}|{commits.01.id}|{commits.2.id}", payload)).toBe(
      "{commits.-1.id}|{commits.01.id}|{commits.2.id}",
    );
    // `payload.` is a path like any other here (filters read the body root when there is no payload object).
    expect(renderTemplate("{payload.x}|{payload.y}", payload)).toBe("1|{payload.y}");
  });

  it("rule 2: a missing key leaves the literal placeholder", () => {
    expect(renderTemplate("ref {ref} by {pusher.nickname} / {nope}", push)).toBe(
      `ref ${push.ref} by {pusher.nickname} / {nope}`,
    );
  });

  it("rule 3: a nested dict or list is compact JSON, truncated at 2000 characters", () => {
    expect(renderTemplate("{issue.labels}", issues)).toBe(JSON.stringify(issues.issue.labels));
    const repo = renderTemplate("{repository}", pr);
    expect(JSON.stringify(pr.repository).length).toBeGreaterThan(2000);
    expect(repo).toBe(JSON.stringify(pr.repository).slice(0, 2000));
  });

  it("rule 3: reads of a large nested list only what its 2000 characters show, not the whole list", () => {
    const list = Array.from({ length: 100_000 }, (_, i) => ({ id: i, message: `commit ${i}` }));
    let read = 0;
    const counted = new Proxy(list, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) read += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    const text = renderTemplate("{commits}", { commits: counted });
    expect(text).toBe(JSON.stringify(list).slice(0, 2000));
    // A webhook's list of a hundred thousand commits is not serialized whole to show its start.
    expect(read).toBeLessThan(2001);
  });

  it("rule 4: {__raw__} is the indented payload truncated at 4000, mixed with other substitutions", () => {
    const small = { action: "created", n: 1 };
    expect(renderTemplate("{action}:\n{__raw__}", small)).toBe(`created:\n${JSON.stringify(small, null, 2)}`);
    const big = renderTemplate("[{action}] {__raw__}", pr);
    expect(big).toBe(`[opened] ${JSON.stringify(pr, null, 2).slice(0, 4000)}`);
    // Non-ASCII text as is (Python's json.dumps would write \u00e9 and \ud83d\ude00), the 4000 counted on it.
    expect(renderTemplate("{__raw__}", { t: "café 😀" })).toBe('{\n  "t": "café 😀"\n}');
  });

  it("rule 5: no prompt dumps the whole payload as indented JSON, truncated at 4000", () => {
    expect(renderTemplate(undefined, push)).toBe(JSON.stringify(push, null, 2).slice(0, 4000));
    expect(renderTemplate(undefined, { a: 1 })).toBe('{\n  "a": 1\n}');
    expect(renderTemplate("", { a: 1 })).toBe('{\n  "a": 1\n}');
  });

  it("rules 4 and 5: a large deep body is dumped as its first 4000 characters, not refused (its full indented text passes V8's longest string)", () => {
    const deep = (n: number): unknown => (n === 0 ? Array(650_000).fill(7) : [deep(n - 1)]);
    const payload = { a: deep(500) };
    const dump = renderTemplate(undefined, payload);
    expect([...dump]).toHaveLength(4000);
    expect(dump.startsWith('{\n  "a": [\n    [\n      [\n')).toBe(true);
    expect(renderTemplate("x {__raw__}", payload)).toBe(`x ${dump}`);
  });

  it("rule 6: only {field} and {nested.field} are substituted; other brace text passes through", () => {
    const payload = { x: "X", a: { b: "B" } };
    const template = "{{x}} {a b} { } {#if x}{/if} {x.} {.x} {a..b} {} {x!} {{a.b}} {x}";
    expect(renderTemplate(template, payload)).toBe(
      "{{x}} {a b} { } {#if x}{/if} {x.} {.x} {a..b} {} {x!} {{a.b}} X",
    );
  });

  it("rule 1: a brace on one side only is text beside a placeholder (a prompt showing JSON)", () => {
    const payload = { n: 1, pull_request: { number: 7 } };
    expect(renderTemplate('Reply as {"pr": {pull_request.number}}', payload)).toBe('Reply as {"pr": 7}');
    expect(renderTemplate('{"a":{"b":{n}}} [{n}]', payload)).toBe('{"a":{"b":1}} [1]');
    expect(renderTemplate("{{n} {n}} {{n}} {{{n}}}", payload)).toBe("{1 1} {{n}} {{{n}}}");
  });

  it("{event_type} falls back to the resolved event type only when the payload has no such key", () => {
    expect(renderTemplate("{event_type}: {event}", { a: 1 }, "push")).toBe("push: {event}");
    expect(renderTemplate("{event_type}", { event_type: "body" }, "header")).toBe("body");
    expect(renderTemplate("{event_type} {event_type.x}", {}, "push")).toBe("push {event_type.x}");
    expect(renderTemplate("{event_type}", {})).toBe("{event_type}");
    expect(renderExtra({ kind: "{event_type}" }, {}, "issues").extra).toEqual({ kind: "issues" });
  });

  it("is single-pass: payload text that looks like a placeholder stays literal", () => {
    const payload = { title: "{__raw__} and {secret}", secret: "s3cr3t" };
    expect(renderTemplate("T: {title}", payload)).toBe("T: {__raw__} and {secret}");
  });

  it("reads the payload only: {headers.<Name>} is a payload path, not a request header", () => {
    expect(renderTemplate("{headers.X-GitHub-Delivery}", { action: "opened" }, "push")).toBe(
      "{headers.X-GitHub-Delivery}",
    );
    expect(renderTemplate("{headers.X-GitHub-Delivery}", { headers: { "X-GitHub-Delivery": "d1" } })).toBe(
      "d1",
    );
  });

  it("does not reach Object.prototype through {constructor} or {__proto__}", () => {
    expect(renderTemplate("{constructor} {__proto__} {toString}", { a: 1 })).toBe(
      "{constructor} {__proto__} {toString}",
    );
  });

  it("counts characters as code points: an emoji is one character, and a pair is never cut in half", () => {
    // `{"t":"` is 6 characters, so the emoji is character 2000 and stays whole.
    const payload = { deep: { t: `${"a".repeat(1993)}😀b` } };
    expect(renderTemplate("{deep}", payload)).toBe(`{"t":"${"a".repeat(1993)}😀`);
    // A value of emoji keeps 2000 characters of it (4000 UTF-16 units), not 1000 emoji.
    const emoji = renderTemplate("{deep}", { deep: { t: "😀".repeat(3000) } });
    expect([...emoji]).toHaveLength(2000);
    expect(emoji).toBe(`{"t":"${"😀".repeat(1994)}`);
    // {__raw__} and the default dump: 4000 characters.
    const raw = renderTemplate(undefined, { t: "😀".repeat(5000) });
    expect([...raw]).toHaveLength(4000);
  });

  it("renders arbitrary templates without throwing and leaves placeholder-free text unchanged", () => {
    fc.assert(
      fc.property(fc.string(), fc.jsonValue(), (template, payload) => {
        const out = renderTemplate(template, payload);
        if (template.length > 0 && !template.includes("{")) expect(out).toBe(template);
      }),
    );
  });
});

describe("renderExtra", () => {
  it("renders string values as templates and stringifies numbers and booleans", () => {
    const extra = {
      repo: "{repository.full_name}",
      pr_number: "{number}",
      chat_id: 12345,
      silent: true,
      missing: "{nope}",
    };
    expect(renderExtra(extra, pr).extra).toEqual({
      repo: pr.repository.full_name,
      pr_number: String(pr.number),
      chat_id: "12345",
      silent: "true",
      missing: "{nope}",
    });
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
  it("keeps a recipient's unset ${NAME} as written: the payload's NAME does not fill it", () => {
    // `to: ${OPS_MAIL}` with OPS_MAIL set nowhere: a body naming OPS_MAIL would have picked the address.
    const payload = { OPS_MAIL: "attacker@evil.example", team: "ops" };
    expect(
      renderExtra(
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
        { to: "${OPS_MAIL}", chat_id: "x-${CHAT}-{team}", subject: "Paid ${OPS_MAIL}", repo: "org/{team}" },
        payload,
      ).extra,
    ).toEqual({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      to: "${OPS_MAIL}",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      chat_id: "x-${CHAT}-ops",
      // Not a recipient: `$` before a placeholder is text and a value (`Paid ${amount}`).
      subject: "Paid $attacker@evil.example",
      repo: "org/ops",
    });
  });

  it("keeps an empty string empty (it is not a missing prompt) and maps undefined to {}", () => {
    expect(renderExtra({ thread_id: "" }, pr).extra).toEqual({ thread_id: "" });
    expect(renderExtra(undefined, pr).extra).toEqual({});
  });
});

describe("renderExtra: the keys it left unfilled", () => {
  it("names the keys whose template left a placeholder as written, not those the payload filled with braces", () => {
    const extra = {
      chat_id: "{room}",
      message_thread_id: "{topic}",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      to: "${OPS_MAIL}",
      subject: "{{literal}} for {event_type}",
      repo: "octo/{name}",
      pr_number: 7,
    };
    const { extra: rendered, unfilled } = renderExtra(extra, { room: "{team}", repo: "x" }, "push");
    expect(rendered).toEqual({
      chat_id: "{team}",
      message_thread_id: "{topic}",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      to: "${OPS_MAIL}",
      subject: "{{literal}} for push",
      repo: "octo/{name}",
      pr_number: "7",
    });
    // A recipient's `${NAME}` that nothing set is kept as written: it names no recipient either.
    expect(unfilled).toEqual(["message_thread_id", "to", "repo"]);
    expect(renderExtra(extra, { room: "r", topic: "{t}", name: "n" }, "push").unfilled).toEqual(["to"]);
    expect(renderExtra({ chat_id: "{room}" }, { room: "r" }).unfilled).toEqual([]);
    // No key: nothing to judge, no list (a record without one is judged by its values' text).
    expect(renderExtra(undefined, {}).unfilled).toBeUndefined();
    expect(renderExtra({}, {}).unfilled).toBeUndefined();
  });

  it("a lone surrogate the payload fills in is U+FFFD (an id holding one cannot go into a request path)", () => {
    const payload = { room: "a\ud800b", thread: "\udc00t" };
    expect(renderExtra({ chat_id: "!{room}:example.org", thread_id: "{thread}" }, payload).extra).toEqual({
      chat_id: "!a\ufffdb:example.org",
      thread_id: "\ufffdt",
    });
  });
});
