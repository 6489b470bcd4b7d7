import { afterEach, describe, expect, it } from "vitest";
import { cronStore } from "../../../src/io/stores/cronStore.js";
import { parseKeepingExtraNumbers } from "../../../src/io/stores/extraNumbers.js";
import { subscriptionStore } from "../../../src/io/stores/subscriptions.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("numbers under deliver_extra of a subscription written by hand", () => {
  it("are read as the text written; numbers elsewhere and strings are left as they are", () => {
    const json = `{
      "a": {"coalesce": {"key": "n", "window_seconds": 0.5}, "created_at": 1700000000000,
            "deliver_extra": {"chat_id": 123456789012345678, "thread_ts": 1700000000.000100, "topic": -7,
                              "note": "x\\"y", "big": 1e3},
            "events": ["deliver_extra", "1"]},
      "deliver_extra": [5, {"n": 6}]
    }`;
    expect(parseKeepingExtraNumbers(json)).toEqual({
      a: {
        coalesce: { key: "n", window_seconds: 0.5 },
        created_at: 1700000000000,
        deliver_extra: {
          chat_id: "123456789012345678",
          thread_ts: "1700000000.000100",
          topic: "-7",
          note: 'x"y',
          big: "1e3",
        },
        events: ["deliver_extra", "1"],
      },
      deliver_extra: [5, { n: 6 }],
    });
    expect(parseKeepingExtraNumbers('{"deliver_extra": {}, "n": 5}')).toEqual({ deliver_extra: {}, n: 5 });
  });

  it("keep JSON.parse's syntax errors at the text's own positions", () => {
    expect(() => parseKeepingExtraNumbers('{"deliver_extra": {"chat_id": 1,}}')).toThrow(SyntaxError);
  });

  it("keep a Discord channel id of webhook_subscriptions.json digit for digit (JSON.parse rounds it to another channel)", () => {
    home = tempHome();
    const path = home.write(
      "webhook_subscriptions.json",
      '{"ci": {"secret": "s", "deliver": "discord", "deliver_extra": {"chat_id": 123456789012345678, "thread_id": 42}}}',
    );
    const record = subscriptionStore(path).read().records.ci as { deliver_extra: Record<string, unknown> };
    expect(record.deliver_extra).toEqual({ chat_id: "123456789012345678", thread_id: "42" });
  });
});

describe("64-bit ids in the filters of a subscription written by hand", () => {
  it("are read as their digits, in groups and in lists too; other numbers are left as they are", () => {
    const json = `{"a": {"filters": [{"field": "id", "equals": 12345678901234567890},
      {"not": {"field": "org", "in": [5, -98765432109876543210, 1.5]}},
      {"field": "n", "equals": 12345678901234567890.0}, {"field": "m", "not_equals": 9007199254740991}],
      "created_at": 1700000000000}}`;
    expect(parseKeepingExtraNumbers(json)).toEqual({
      a: {
        filters: [
          { field: "id", equals: "12345678901234567890" },
          { not: { field: "org", in: [5, "-98765432109876543210", 1.5] } },
          // Not written as a whole number: a float, as config.yaml reads it too.
          { field: "n", equals: Number("12345678901234567890") },
          { field: "m", not_equals: 9007199254740991 },
        ],
        created_at: 1700000000000,
      },
    });
  });
});

describe("numbers a filter on a header or the event type of a subscription written by hand compares", () => {
  it("are the text written, as config.yaml reads them (a header is text: 1.0 is not 1); payload fields' stay numbers", () => {
    const json = `{"a": {"filters": [{"field": "headers.X-Version", "equals": 1.0},
      {"any": [{"field": "event", "in": [2.10, "x", 3]}, {"field": "HEADERS.x", "not_equals": 1e3}]},
      {"field": "headers.X-Tag", "contains": 1.50}, {"field": "n", "equals": 1.0}, {"field": "m", "in": [2.10]}]}}`;
    expect(parseKeepingExtraNumbers(json)).toEqual({
      a: {
        filters: [
          { field: "headers.X-Version", equals: "1.0" },
          {
            any: [
              { field: "event", in: ["2.10", "x", "3"] },
              { field: "HEADERS.x", not_equals: 1000 },
            ],
          },
          { field: "headers.X-Tag", contains: "1.50" },
          { field: "n", equals: 1 },
          { field: "m", in: [2.1] },
        ],
      },
    });
  });
});

describe("numbers under deliver_extra of a cron job written by hand", () => {
  it("keep a Discord channel id digit for digit (JSON.parse rounds it to another channel)", () => {
    home = tempHome();
    const path = home.write(
      "cron/jobs.json",
      '{"revision": 1, "jobs": {"a1": {"id": "a1", "schedule": "@daily", "prompt": "p", "deliver": "discord", "deliver_extra": {"chat_id": 123456789012345678}}}}',
    );
    expect(cronStore(path).read().records.a1?.deliver_extra).toEqual({ chat_id: "123456789012345678" });
  });
});
