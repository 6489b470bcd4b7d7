import { describe, expect, it } from "vitest";
import { BodyBudget, BUFFERED_BODIES } from "../../../src/io/http/core.js";

const LIMIT = 100;
const declared = (length: number) => ({ "content-length": String(length) });
const CHUNKED = { "transfer-encoding": "chunked" };

describe("BodyBudget: the bodies a server buffers at once", () => {
  it("takes a body's declared length (at most the limit), nothing for no body; past BUFFERED_BODIES × the limit, -1", () => {
    const budget = new BodyBudget();
    expect(budget.take(declared(40), LIMIT)).toBe(40);
    expect(budget.take(declared(LIMIT), LIMIT)).toBe(LIMIT);
    expect(budget.take(declared(LIMIT + 50), LIMIT)).toBe(LIMIT);
    expect(budget.take({}, LIMIT)).toBe(0);
    for (let i = 0; i < BUFFERED_BODIES - 3; i++) expect(budget.take(declared(LIMIT), LIMIT)).toBe(LIMIT);
    // 60 bytes are left: a body of 60 fits, one more byte does not; a request with no body always does.
    expect(budget.take(declared(61), LIMIT)).toBe(-1);
    expect(budget.take(declared(0), LIMIT)).toBe(0);
    expect(budget.take(declared(60), LIMIT)).toBe(60);
    expect(budget.take(declared(1), LIMIT)).toBe(-1);
    budget.give(40, LIMIT);
    expect(budget.take(declared(40), LIMIT)).toBe(40);
  });

  it("gives each of N ingress threads its share of the bound", () => {
    const budget = new BodyBudget(2);
    for (let i = 0; i < BUFFERED_BODIES / 2; i++) expect(budget.take(declared(LIMIT), LIMIT)).toBe(LIMIT);
    expect(budget.take(declared(1), LIMIT)).toBe(-1);
  });

  it("a chunked body takes nothing at its head and its bytes as they arrive (more); past the bound, false", () => {
    const budget = new BodyBudget();
    // 64 chunked bodies arriving at once, each a few bytes in: they hold those bytes, not 64 whole limits.
    for (let i = 0; i < BUFFERED_BODIES; i++) {
      expect(budget.take(CHUNKED, LIMIT)).toBe(0);
      expect(budget.more(10, LIMIT)).toBe(true);
    }
    expect(budget.take(declared(LIMIT), LIMIT)).toBe(LIMIT);
    // Fill the rest: 64 × 100 − 640 − 100 = 5660 bytes left.
    for (let i = 0; i < 56; i++) expect(budget.take(declared(LIMIT), LIMIT)).toBe(LIMIT);
    expect(budget.more(60, LIMIT)).toBe(true);
    expect(budget.more(1, LIMIT)).toBe(false);
    // No byte left: a chunked body is not read at all, as a declared one is not.
    expect(budget.take(CHUNKED, LIMIT)).toBe(-1);
    expect(budget.take({}, LIMIT)).toBe(0);
    budget.give(70, LIMIT);
    expect(budget.take(CHUNKED, LIMIT)).toBe(0);
    expect(budget.more(70, LIMIT)).toBe(true);
    expect(budget.more(1, LIMIT)).toBe(false);
  });

  it("a chunked body taken before a reload changed the limit grows as its share of the new one", () => {
    const budget = new BodyBudget();
    expect(budget.take(CHUNKED, 1000)).toBe(0);
    expect(budget.more(500, 1000)).toBe(true);
    // Half a body of the old limit: half of one place of the new one (5 bytes of 10).
    for (let i = 0; i < BUFFERED_BODIES - 1; i++) expect(budget.take(declared(10), 10)).toBe(10);
    expect(budget.take(declared(5), 10)).toBe(5);
    expect(budget.more(1, 1000)).toBe(false);
    budget.give(5, 10);
    expect(budget.more(500, 1000)).toBe(true);
    expect(budget.take(declared(1), 10)).toBe(-1);
    budget.give(1000, 1000);
    expect(budget.take(declared(10), 10)).toBe(10);
  });

  it("counts a body taken under another limit (before a reload changed it) as the same share of the new one", () => {
    const budget = new BodyBudget();
    // Three bodies of the old limit held: three of the 64 bodies, whatever the limit is now.
    for (let i = 0; i < 3; i++) expect(budget.take(declared(1000), 1000)).toBe(1000);
    expect(budget.take(declared(1), 10)).toBe(1);
    for (let i = 0; i < BUFFERED_BODIES - 4; i++) expect(budget.take(declared(10), 10)).toBe(10);
    expect(budget.take(declared(10), 10)).toBe(-1);
    expect(budget.take(declared(9), 10)).toBe(9);
    expect(budget.take(declared(1), 10)).toBe(-1);
    // Given back under the limit each was taken with: the old ones free a whole body each.
    budget.give(1000, 1000);
    expect(budget.take(declared(10), 10)).toBe(10);
    expect(budget.take(declared(1), 10)).toBe(-1);
    // Back to the old limit: the bodies held under it and those of the other one count together.
    budget.give(1000, 1000);
    budget.give(1000, 1000);
    expect(budget.take(declared(1000), 1000)).toBe(1000);
    expect(budget.take(declared(1000), 1000)).toBe(1000);
    expect(budget.take(declared(1), 1000)).toBe(-1);
  });
});
