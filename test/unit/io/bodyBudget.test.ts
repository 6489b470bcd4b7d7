import { describe, expect, it } from "vitest";
import { BodyBudget, BUFFERED_BODIES } from "../../../src/io/http/core.js";

const LIMIT = 100;
const declared = (length: number) => ({ "content-length": String(length) });
const CHUNKED = { "transfer-encoding": "chunked" };

describe("BodyBudget: the bodies a server buffers at once", () => {
  it("takes a body's bytes as they arrive, declared or chunked; past BUFFERED_BODIES × the limit, more says no", () => {
    const budget = new BodyBudget();
    expect(budget.admits(declared(LIMIT), LIMIT)).toBe(true);
    for (let i = 0; i < BUFFERED_BODIES - 1; i++) expect(budget.more(LIMIT, LIMIT)).toBe(true);
    expect(budget.admits(CHUNKED, LIMIT)).toBe(true);
    // 100 bytes are left: 60 fit, then 40, and one more byte does not.
    expect(budget.more(60, LIMIT)).toBe(true);
    expect(budget.more(41, LIMIT)).toBe(false);
    expect(budget.more(40, LIMIT)).toBe(true);
    expect(budget.more(1, LIMIT)).toBe(false);
    budget.give(40, LIMIT);
    expect(budget.more(40, LIMIT)).toBe(true);
  });

  it("admits a head that declares a body while a byte is left, whatever length it declares: it holds nothing until its bytes come", () => {
    const budget = new BodyBudget();
    // 64 heads that each declared the whole limit and sent nothing hold nothing: a 65th body is read.
    for (let i = 0; i < BUFFERED_BODIES; i++) expect(budget.admits(declared(LIMIT), LIMIT)).toBe(true);
    expect(budget.admits(declared(LIMIT), LIMIT)).toBe(true);
    expect(budget.more(LIMIT, LIMIT)).toBe(true);
  });

  it("admits no body while no byte is left, declared or chunked; a request with no body always", () => {
    const budget = new BodyBudget();
    for (let i = 0; i < BUFFERED_BODIES; i++) expect(budget.more(LIMIT, LIMIT)).toBe(true);
    expect(budget.admits(declared(1), LIMIT)).toBe(false);
    expect(budget.admits(CHUNKED, LIMIT)).toBe(false);
    expect(budget.admits({}, LIMIT)).toBe(true);
    expect(budget.admits(declared(0), LIMIT)).toBe(true);
    budget.give(1, LIMIT);
    expect(budget.admits(declared(LIMIT), LIMIT)).toBe(true);
  });

  it("gives each of N ingress threads its share of the bound", () => {
    const budget = new BodyBudget(2);
    expect(budget.admits(declared(LIMIT), LIMIT)).toBe(true);
    for (let i = 0; i < BUFFERED_BODIES / 2; i++) expect(budget.more(LIMIT, LIMIT)).toBe(true);
    expect(budget.more(1, LIMIT)).toBe(false);
    expect(budget.admits(declared(1), LIMIT)).toBe(false);
  });

  it("a body taken before a reload changed the limit grows as its share of the new one", () => {
    const budget = new BodyBudget();
    expect(budget.admits(CHUNKED, 1000)).toBe(true);
    expect(budget.more(500, 1000)).toBe(true);
    // Half a body of the old limit: half of one place of the new one (5 bytes of 10).
    expect(budget.admits(declared(10), 10)).toBe(true);
    for (let i = 0; i < BUFFERED_BODIES - 1; i++) expect(budget.more(10, 10)).toBe(true);
    expect(budget.more(5, 10)).toBe(true);
    expect(budget.more(1, 1000)).toBe(false);
    budget.give(5, 10);
    expect(budget.more(500, 1000)).toBe(true);
    expect(budget.admits(declared(1), 10)).toBe(false);
    budget.give(1000, 1000);
    expect(budget.more(10, 10)).toBe(true);
  });

  it("counts a body taken under another limit (before a reload changed it) as the same share of the new one", () => {
    const budget = new BodyBudget();
    // Three bodies of the old limit held: three of the 64 bodies, whatever the limit is now.
    expect(budget.admits(declared(1000), 1000)).toBe(true);
    for (let i = 0; i < 3; i++) expect(budget.more(1000, 1000)).toBe(true);
    expect(budget.admits(declared(10), 10)).toBe(true);
    for (let i = 0; i < BUFFERED_BODIES - 3; i++) expect(budget.more(10, 10)).toBe(true);
    expect(budget.more(1, 10)).toBe(false);
    expect(budget.admits(declared(1), 10)).toBe(false);
    // Given back under the limit each was taken with: the old ones free a whole body each.
    budget.give(1000, 1000);
    expect(budget.more(10, 10)).toBe(true);
    expect(budget.more(1, 10)).toBe(false);
    // Back to the old limit: the bodies held under it and those of the other one count together.
    budget.give(1000, 1000);
    expect(budget.admits(declared(1000), 1000)).toBe(true);
    expect(budget.more(1000, 1000)).toBe(true);
    expect(budget.more(1, 1000)).toBe(false);
  });
});
