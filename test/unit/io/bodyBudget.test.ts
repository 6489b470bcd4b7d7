import { describe, expect, it } from "vitest";
import { BodyBudget, BUFFERED_BODIES } from "../../../src/io/http/core.js";

const LIMIT = 100;
const declared = (length: number) => ({ "content-length": String(length) });
const CHUNKED = { "transfer-encoding": "chunked" };

describe("BodyBudget: the bodies a server buffers at once", () => {
  it("takes a body's declared length (at most the limit), a chunked body's limit, nothing for no body; past BUFFERED_BODIES × the limit, -1", () => {
    const budget = new BodyBudget();
    expect(budget.take(declared(40), LIMIT)).toBe(40);
    expect(budget.take(CHUNKED, LIMIT)).toBe(LIMIT);
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
    for (let i = 0; i < BUFFERED_BODIES / 2; i++) expect(budget.take(CHUNKED, LIMIT)).toBe(LIMIT);
    expect(budget.take(declared(1), LIMIT)).toBe(-1);
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
