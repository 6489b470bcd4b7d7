import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { describeTransportError, summarizedIssueDump } from "../../../src/io/mcp/transportErrors.js";

/** zod's issues as an MCP SDK server quotes them when it refuses its own tool's result. */
const DUMP = JSON.stringify(
  [
    {
      code: "invalid_type",
      path: ["content", 0, "text"],
      message: "Invalid input: expected string, received null",
    },
  ],
  null,
  2,
);

/**
 * Every McpError's text is read for such a dump, a tool's error message included, on the gateway's main
 * thread: the read must cost in proportion to the text. A message of "Invalid x " repeated 100,000 times
 * (1 MB) kept a backtracking search busy for close to a minute, so a test that takes seconds fails.
 */
describe("reading a server's error message for zod's issues", () => {
  it("a refused result's dump is still one line naming the field and that the tool ran", () => {
    const err = new McpError(-32602, `Invalid tools/call result: ${DUMP}\n`);
    expect(describeTransportError(err, [])).toBe(
      "MCP error -32602: Invalid tools/call result: content.0.text: expected string, received null — the server's MCP SDK refused the result its own tool returned, so the tool ran but its result was not sent (a fault of the server)",
    );
    expect(
      summarizedIssueDump(
        `MCP error -32602: Invalid task creation result: ${DUMP.replace("content", "task")}`,
      ),
    ).toBe("MCP error -32602: Invalid task creation result: task.0.text: expected string, received null");
  });

  it("a 1 MB message of repeated words is read at once and cut as any long message is", () => {
    const message = "Invalid x ".repeat(100_000);
    const text = describeTransportError(new McpError(-32603, message), []);
    const whole = `MCP error -32603: ${message}`;
    const cut = whole.lastIndexOf(" ", 2000);
    // Compared so, a failure does not print the megabyte.
    expect(text === `${whole.slice(0, cut)}… (${whole.length - cut} more characters)`).toBe(true);
    expect(summarizedIssueDump(`${message}Invalid tools/call result: [`)).toBeUndefined();
  }, 5_000);

  it("a dump after 200 KB of such words is found, named by its own method", () => {
    const text = `MCP error -32602: ${"Invalid x ".repeat(20_000)}Invalid tools/call result: ${DUMP}`;
    expect(summarizedIssueDump(text)).toMatch(
      /Invalid x Invalid tools\/call result: content\.0\.text: expected string, received null — the server's MCP SDK refused the result its own tool returned/,
    );
  }, 5_000);

  it("past 256 KiB a message is not read for a dump", () => {
    const text = `MCP error -32602: ${"x".repeat(256 * 1024)} Invalid tools/call result: ${DUMP}`;
    expect(summarizedIssueDump(text)).toBeUndefined();
  });
});
