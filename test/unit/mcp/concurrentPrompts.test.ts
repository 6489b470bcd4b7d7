import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { ElicitationRequest } from "../../../src/actors/mcp/approvals.js";
import { terminalApprovals } from "../../../src/actors/mcp/terminalApprovals.js";

/** A terminal that answers each question as it is shown, from `answers` keyed by the question's start. */
function answeringTerminal(answers: Array<[string, string]>) {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = new PassThrough();
  let written = "";
  output.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    written += text;
    const next = answers.findIndex(([question]) => text.startsWith(question));
    if (next === -1) return;
    const [[, answer]] = answers.splice(next, 1) as [[string, string]];
    setImmediate(() => input.write(`${answer}\n`));
  });
  return { surface: terminalApprovals({ input, output }), written: () => written };
}

function form(server: string, field: string): ElicitationRequest {
  return {
    server,
    message: `Fill in ${field}`,
    requestedSchema: { type: "object", properties: { [field]: { type: "string" } }, required: [field] },
  };
}

/**
 * A server may send a second form (or a tool call may need an approval) while one is being asked: each
 * question reads one line of the one terminal, so they are asked one after the other, never together —
 * else one typed line answers both, and the second form's questions interleave with the first's.
 */
describe("questions that arrive together are asked one at a time", () => {
  it("two forms: each gets its own answers, the second shown once the first is done", async () => {
    const t = answeringTerminal([
      ["  city", "Lisbon"],
      ["Send these answers", "y"],
      ["  pet", "heron"],
      ["Send these answers", "y"],
    ]);
    const never = new AbortController().signal;
    const [first, second] = await Promise.all([
      t.surface.elicit(form("a", "city"), never),
      t.surface.elicit(form("b", "pet"), never),
    ]);
    expect(first).toEqual({ action: "accept", content: { city: "Lisbon" } });
    expect(second).toEqual({ action: "accept", content: { pet: "heron" } });
    expect(t.written()).toBe(
      'Server "a" asks: Fill in city\n  city: Send these answers? [y/N] Server "b" asks: Fill in pet\n  pet: Send these answers? [y/N] ',
    );
  });

  it("a form whose wait ran out while another was asked is cancelled without being shown", async () => {
    const t = answeringTerminal([
      ["  city", "Lisbon"],
      ["Send these answers", "y"],
    ]);
    const waited = new AbortController();
    const first = t.surface.elicit(form("a", "city"), new AbortController().signal);
    const second = t.surface.elicit(form("b", "pet"), waited.signal);
    waited.abort();
    expect(await first).toEqual({ action: "accept", content: { city: "Lisbon" } });
    expect(await second).toEqual({ action: "cancel" });
    expect(t.written()).not.toContain('Server "b"');
  });
});
