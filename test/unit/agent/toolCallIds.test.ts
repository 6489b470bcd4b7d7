import { describe, expect, it } from "vitest";
import { uniqueToolCallIds } from "../../../src/agent/toolCallIds.js";

const calls = (...ids: string[]) =>
  ids.map((toolCallId) => ({ type: "tool-call", toolCallId, toolName: "t" }));
const idsOf = (content: ReadonlyArray<{ type: string; toolCallId?: string }>) =>
  content.map((part) => part.toolCallId);

describe("each tool call of an answer gets an id no other call of the run has", () => {
  it("a repeated or empty id gets a fresh one; a unique id is kept as the server wrote it", () => {
    const seen = new Set<string>();
    expect(idsOf(uniqueToolCallIds(calls("a", "a", ""), seen))).toEqual(["a", "a_2", "call_1"]);
    // A later turn's repeat of an earlier id is fresh too.
    expect(idsOf(uniqueToolCallIds(calls("a", "b"), seen))).toEqual(["a_3", "b"]);
  });

  it("a fresh id never takes one the server wrote for another call of the same answer", () => {
    // The empty id was named call_1, and the server's own call_1 then renamed call_1_2.
    expect(idsOf(uniqueToolCallIds(calls("", "call_1"), new Set()))).toEqual(["call_2", "call_1"]);
    // The second x was named x_2, and the server's own x_2 then renamed.
    expect(idsOf(uniqueToolCallIds(calls("x", "x", "x_2"), new Set()))).toEqual(["x", "x_3", "x_2"]);
  });
});
