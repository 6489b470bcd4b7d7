import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { terminalApprovals } from "../../../src/actors/mcp/terminalApprovals.js";

/** A terminal nobody answers: everything written collected; `onQuestion` runs once a question is shown. */
function silentTerminal(onQuestion: (input: PassThrough) => void) {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = new PassThrough();
  let written = "";
  output.on("data", (chunk: Buffer) => {
    written += chunk.toString();
    if (/(: |\] )$/.test(chunk.toString())) onQuestion(input);
  });
  return { surface: terminalApprovals({ input, output }), written: () => written };
}

/**
 * A question the wait ran out on (the tool `timeout` for an approval, `elicitation.timeout` for a form) or
 * that stdin closed under (Ctrl-D) has no answer whose Enter the terminal echoes: its line is ended, so the
 * message written next (`svc: ... it was not given in time`, the call's result) starts a line of its own.
 */
describe("a prompt left unanswered ends its line", () => {
  it("an approval the wait ran out on", async () => {
    const wait = new AbortController();
    const t = silentTerminal(() => wait.abort());
    const approved = await t.surface.approve(
      { server: "lz", tool: "write-note", args: { text: "x" } },
      wait.signal,
    );
    expect(approved).toBe(false);
    expect(t.written()).toBe('Server "lz" is untrusted. Run tool "write-note" with {"text":"x"}? [y/N] \n');
  });

  it("an elicitation form the wait ran out on", async () => {
    const wait = new AbortController();
    const t = silentTerminal(() => wait.abort());
    const result = await t.surface.elicit(
      {
        server: "s",
        message: "Pick a color",
        requestedSchema: { type: "object", properties: { color: { type: "string", default: "blue" } } },
      } as never,
      wait.signal,
    );
    expect(result).toEqual({ action: "cancel" });
    expect(t.written()).toBe('Server "s" asks: Pick a color\n  color [blue]: \n');
  });

  it("an approval whose stdin closed", async () => {
    const t = silentTerminal((input) => input.end());
    const approved = await t.surface.approve(
      { server: "lz", tool: "write-note", args: {} },
      new AbortController().signal,
    );
    expect(approved).toBe(false);
    expect(t.written()).toMatch(/\[y\/N\] \n$/);
  });
});
