import { createHmac } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGatewayInHome, startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { svc } from "../cli/svc.js";

/** Spec 2.3 field paths whose value is not a plain JSON field of the body: `payload`, headers, event. */

const OPEN = "INSECURE_NO_AUTH";
const IGNORED = { status: 200, body: { status: "ignored", reason: "filter" } };

describe("filter fields: payload, headers.<Name>, event (spec 2.3) over HTTP", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      // Unquoted YAML numbers and booleans, as an operator writes `equals: 5` for a header.
      config: `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    rate_limit: 1000
    routes:
      payload_text: {secret: ${OPEN}, filters: [{field: payload, equals: text}]}
      payload_list: {secret: ${OPEN}, filters: [{field: payload, contains: b}]}
      payload_absent: {secret: ${OPEN}, filters: [{field: payload, exists: true}, {field: payload.a, equals: 1}]}
      header_number: {secret: ${OPEN}, filters: [{field: headers.X-Attempt, equals: 5}]}
      header_in: {secret: ${OPEN}, filters: [{field: headers.x-priority, in: [1, 2]}]}
      header_bool: {secret: ${OPEN}, filters: [{field: headers.X-Dry-Run, not_equals: true}]}
      event_number: {secret: ${OPEN}, filters: [{field: event, equals: 2}]}
`,
    });
  });
  afterAll(() => gw.stop());

  const post = async (route: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), body, headers);
    return { status: res.status, body: res.status === 202 ? { status: res.body.status } : res.body };
  };
  const ACCEPTED = { status: 202, body: { status: "accepted" } };

  it("`payload` is the body's payload field whatever it holds (a string, a list); without one, the body", async () => {
    expect(await post("payload_text", { payload: "text" })).toEqual(ACCEPTED);
    expect(await post("payload_text", { payload: "other" })).toEqual(IGNORED);
    expect(await post("payload_list", { payload: ["a", "b"] })).toEqual(ACCEPTED);
    expect(await post("payload_list", { payload: ["a"] })).toEqual(IGNORED);
    // Without a payload field, `payload` is the whole body and `payload.x` reads the root.
    expect(await post("payload_absent", { a: 1 })).toEqual(ACCEPTED);
    expect(await post("payload_absent", { a: 2 })).toEqual(IGNORED);
  });

  it("a header is text: an unquoted YAML number or boolean compares with the header's text", async () => {
    expect(await post("header_number", {}, { "X-Attempt": "5" })).toEqual(ACCEPTED);
    expect(await post("header_number", {}, { "X-Attempt": "6" })).toEqual(IGNORED);
    expect(await post("header_in", {}, { "X-Priority": "2" })).toEqual(ACCEPTED);
    expect(await post("header_in", {}, { "X-Priority": "3" })).toEqual(IGNORED);
    expect(await post("header_bool", {}, { "X-Dry-Run": "true" })).toEqual(IGNORED);
    expect(await post("header_bool", {}, { "X-Dry-Run": "false" })).toEqual(ACCEPTED);
    expect(await post("header_bool", {})).toEqual(ACCEPTED);
  });

  it("the event type is text too: `equals: 2` matches the event `2`", async () => {
    expect(await post("event_number", {}, { "X-Forge-Event": "2" })).toEqual(ACCEPTED);
  });
});

describe("a 64-bit id in a filter of a subscription record written by hand, over HTTP", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    rate_limit: 1000
    routes:
      static_account: {secret: ${OPEN}, filters: [{field: account.id, equals: 12345678901234567890}]}
`,
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          hand_account: { secret: OPEN, enabled: true, filters: ["FILTERS"] },
        }).replace(
          '["FILTERS"]',
          '[{"field": "account.id", "equals": 12345678901234567890}, {"field": "org", "in": [98765432109876543210]}]',
        ),
      },
    });
  }, 60_000);
  afterAll(() => gw.stop());

  /** The body as written (text): JSON.stringify would round the ids before they were sent. */
  const post = async (route: string, body: string) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), body);
    return { status: res.status, body: res.status === 202 ? { status: res.body.status } : res.body };
  };
  const ACCEPTED = { status: 202, body: { status: "accepted" } };
  const body = (id: string, org = "98765432109876543210") => `{"account": {"id": ${id}}, "org": ${org}}`;

  it("compares it by its digits, as the same filter in config.yaml does: its float neighbours are other accounts", async () => {
    for (const route of ["static_account", "hand_account"]) {
      expect(await post(route, body("12345678901234567890"))).toEqual(ACCEPTED);
      // The same float as 12345678901234567890 to JSON.parse, but another id.
      expect(await post(route, body("12345678901234567891"))).toEqual(IGNORED);
      expect(await post(route, body("12345678901234567000"))).toEqual(IGNORED);
    }
    expect(await post("hand_account", body("12345678901234567890", "98765432109876543211"))).toEqual(IGNORED);
  }, 60_000);
});

describe("a number a header filter of a subscription record written by hand compares, over HTTP", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    rate_limit: 1000
    routes:
      static_version: {secret: ${OPEN}, filters: [{field: headers.X-Version, equals: 1.0}]}
`,
      files: {
        "webhook_subscriptions.json": JSON.stringify({
          hand_version: { secret: OPEN, enabled: true, filters: ["FILTERS"] },
        }).replace('["FILTERS"]', '[{"field": "headers.X-Version", "equals": 1.0}]'),
      },
    });
  }, 60_000);
  afterAll(() => gw.stop());

  it("is the text written, as in config.yaml: 1.0 matches X-Version: 1.0, not 1", async () => {
    const ACCEPTED = { status: 202, body: { status: "accepted" } };
    const post = async (route: string, version: string) => {
      const res = await postJson(gw.url(`/webhooks/${route}`), {}, { "X-Version": version });
      return { status: res.status, body: res.status === 202 ? { status: res.body.status } : res.body };
    };
    for (const route of ["static_version", "hand_version"]) {
      expect(await post(route, "1.0")).toEqual(ACCEPTED);
      expect(await post(route, "1")).toEqual(IGNORED);
    }
  }, 60_000);
});

describe("True, Null and ~ written unquoted in a filter, over HTTP", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    rate_limit: 1000
    routes:
      header_flag: {secret: ${OPEN}, filters: [{field: headers.X-Flag, equals: True}]}
      header_note: {secret: ${OPEN}, filters: [{field: headers.X-Note, contains: True}]}
      event_words: {secret: ${OPEN}, filters: [{field: event, in: [True, Null, ~]}]}
      payload_quoted: {secret: ${OPEN}, filters: [{field: s, contains: 'True'}]}
`,
    });
  }, 60_000);
  afterAll(() => gw.stop());

  const ACCEPTED = { status: 202, body: { status: "accepted" } };
  const post = async (route: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), body, headers);
    return { status: res.status, body: res.status === 202 ? { status: res.body.status } : res.body };
  };

  it("on a header or the event type are the text written: X-Flag: True (Python's str(True)) matches, true does not", async () => {
    expect(await post("header_flag", {}, { "X-Flag": "True" })).toEqual(ACCEPTED);
    expect(await post("header_flag", {}, { "X-Flag": "true" })).toEqual(IGNORED);
    expect(await post("header_note", {}, { "X-Note": "True story" })).toEqual(ACCEPTED);
    expect(await post("header_note", {}, { "X-Note": "untrue" })).toEqual(IGNORED);
    for (const event of ["True", "Null", "~"])
      expect(await post("event_words", {}, { "X-Forge-Event": event }), event).toEqual(ACCEPTED);
    expect(await post("event_words", {}, { "X-Forge-Event": "true" })).toEqual(IGNORED);
  });

  it("in quotes on a payload field, as the refusal of the unquoted one says, contains: 'True' looks for that text", async () => {
    expect(await post("payload_quoted", { s: "True story" })).toEqual(ACCEPTED);
    expect(await post("payload_quoted", { s: "untrue" })).toEqual(IGNORED);
  });

  it("unquoted on a payload field they are refused by svc config check and the gateway's start, each route named, a field merged in too", async () => {
    const home = tempHome();
    try {
      home.write(
        "config.yaml",
        `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    routes:
      story: {secret: ${OPEN}, filters: [{field: s, contains: True}]}
      draft: {secret: ${OPEN}, filters: [{field: pull_request.draft, equals: FALSE}]}
      closed: {secret: ${OPEN}, filters: [{field: closed_at, in: [~]}]}
      merged: {secret: ${OPEN}, filters: [&pf {field: pull_request.merged, equals: false}]}
      unmerged: {secret: ${OPEN}, filters: [{<<: *pf, equals: FALSE}]}
`,
        0o600,
      );
      const file = join(home.dir, "config.yaml");
      const expected = [
        `${file}: line 6: platforms.webhook.routes.story.filters[0].contains: YAML reads True as the boolean true, so contains looks for the text "true" in a string, not "True" — put it in quotes to look for that text: contains: 'True' (write true to find the boolean in a list)`,
        `${file}: line 7: platforms.webhook.routes.draft.filters[0].equals: YAML reads FALSE as the boolean false, not as text — write false to compare with a true/false field, or 'FALSE' in quotes to compare with that text`,
        `${file}: line 8: platforms.webhook.routes.closed.filters[0].in[0]: YAML reads ~ as null, not as text — write null to compare with a null field, or '~' in quotes to compare with that text`,
        // The field a merge key gives is the route's as much as one written with the value.
        `${file}: line 10: platforms.webhook.routes.unmerged.filters[0].equals: YAML reads FALSE as the boolean false, not as text — write false to compare with a true/false field, or 'FALSE' in quotes to compare with that text`,
      ];
      const check = await svc(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stderr.trimEnd().split("\n")).toEqual(expected);
      await expect(startGatewayInHome(home)).rejects.toThrow(expected.join("\n"));
    } finally {
      home.cleanup();
    }
  }, 60_000);
});

describe("a header filter written through a merge key, over HTTP (signed POSTs)", () => {
  const SECRET = "merge-key-secret";
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    rate_limit: 1000
    secret: ${SECRET}
    routes:
      a: {filters: [&hf {field: headers.X-Flag, equals: True}]}
      b: {filters: [{<<: *hf, equals: False}]}
      c: {filters: [{<<: *hf, equals: 1.0}]}
`,
    });
  }, 60_000);
  afterAll(() => gw.stop());

  let deliveries = 0;
  const post = async (route: string, flag: string) => {
    const text = JSON.stringify({ action: "opened" });
    const res = await postJson(gw.url(`/webhooks/${route}`), text, {
      "X-Hub-Signature-256": `sha256=${createHmac("sha256", SECRET).update(text).digest("hex")}`,
      "X-GitHub-Event": "issues",
      "X-GitHub-Delivery": `merge-${++deliveries}`,
      "X-Flag": flag,
    });
    return { status: res.status, body: res.status === 202 ? { status: res.body.status } : res.body };
  };
  const ACCEPTED = { status: 202, body: { status: "accepted" } };

  it("compares the text written with the header the route merges its field from: False is not false, 1.0 not 1", async () => {
    expect(await post("a", "True")).toEqual(ACCEPTED);
    expect(await post("b", "False")).toEqual(ACCEPTED);
    expect(await post("b", "false")).toEqual(IGNORED);
    expect(await post("c", "1.0")).toEqual(ACCEPTED);
    expect(await post("c", "1")).toEqual(IGNORED);
  });
});

describe("a header filter nested in a merge source (not, any, all), over HTTP", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway({
      config: `platforms:
  webhook:
    enabled: true
    host: 127.0.0.1
    rate_limit: 1000
    routes:
      nodraft: {secret: ${OPEN}, prompt: x, filters: [{<<: &nodraft {not: {field: headers.X-Version, equals: 1.0}}}]}
      merged: {secret: ${OPEN}, prompt: x, filters: [{<<: *nodraft}]}
      direct: {secret: ${OPEN}, prompt: x, filters: [{not: {field: headers.X-Version, equals: 1.0}}]}
`,
    });
  }, 60_000);
  afterAll(() => gw.stop());

  const post = async (route: string, version: string) => {
    const res = await postJson(gw.url(`/webhooks/${route}`), { a: 1 }, { "X-Version": version });
    return { status: res.status, body: res.status === 202 ? { status: res.body.status } : res.body };
  };
  const ACCEPTED = { status: 202, body: { status: "accepted" } };

  it("compares the text written, as the same filter written in the list does: 1.0 is not 1", async () => {
    for (const route of ["nodraft", "merged", "direct"]) {
      expect([route, await post(route, "1.0")]).toEqual([route, IGNORED]);
      expect([route, await post(route, "1")]).toEqual([route, ACCEPTED]);
    }
  });
});
