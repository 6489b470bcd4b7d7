import { describe, expect, it } from "vitest";
import { flatLayout } from "../../../src/io/stores/flatLayout.js";

describe("the layout of a store keyed by name", () => {
  it("reads a document keyed by name as its records, also records named version, revision or subscriptions", () => {
    const doc = { version: { secret: "a" }, revision: { secret: "b" }, subscriptions: { secret: "c" } };
    expect(flatLayout(doc, "route name", "subscriptions")).toEqual({ records: doc });
  });

  it("reads the earlier {revision, subscriptions} wrapper alone as the records it wraps", () => {
    expect(flatLayout({ revision: 3, subscriptions: { ci: {} } }, "route name", "subscriptions")).toEqual({
      records: { ci: {} },
    });
  });

  it("refuses a format version field, naming the version and the layout this version reads", () => {
    const layout = flatLayout({ version: 2, subscriptions: { ci: {} } }, "route name", "subscriptions");
    expect(layout).toEqual({
      problem:
        'format version 2, written by a newer version of svc (this one reads the records keyed by route name, {"<route name>": {...}}, without a version field) — run the version of svc that wrote it, or write its records keyed by route name',
    });
  });

  it("refuses the wrapper with other keys beside it, naming them", () => {
    const layout = flatLayout(
      { revision: 3, subscriptions: { ci: {} }, format: 2, defaults: {} },
      "route name",
      "subscriptions",
    );
    expect("problem" in layout && layout.problem).toMatch(
      /^"format", "defaults" beside "revision" and "subscriptions" is no layout this version of svc reads \(/,
    );
  });
});
