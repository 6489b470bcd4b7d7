import { PassThrough } from "node:stream";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { answerProblem } from "../../../src/actors/mcp/formAnswer.js";
import { terminalApprovals } from "../../../src/actors/mcp/terminalApprovals.js";

/** A terminal that types the next answer each time a question (ending in ": " or "] ") is on the screen. */
function terminal(answers: string[]) {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = new PassThrough();
  let written = "";
  output.on("data", (chunk: Buffer) => {
    written += chunk.toString();
    if (!/(: |\] )$/.test(chunk.toString())) return;
    const next = answers.shift();
    if (next !== undefined) input.write(`${next}\n`);
  });
  return { surface: terminalApprovals({ input, output }), written: () => written };
}

const never = new AbortController().signal;
type Schema = Parameters<ReturnType<typeof terminalApprovals>["elicit"]>[0]["requestedSchema"];
const form = (properties: Record<string, unknown>, required: string[]): Schema =>
  ({ type: "object", properties, required }) as Schema;

describe("the terminal's elicitation form asks a field again when the answer does not fit its schema", () => {
  it("a number: not a number, below minimum, above maximum and a fraction for an integer are refused", async () => {
    const t = terminal(["abc", "0", "11", "2.5", "7", "y"]);
    const result = await t.surface.elicit(
      {
        server: "s",
        message: "How many?",
        requestedSchema: form({ n: { type: "integer", minimum: 1, maximum: 10 } }, ["n"]),
      },
      never,
    );
    // NaN went out as null before, which the MCP SDK refuses as an invalid result: the server got an error.
    expect(result).toEqual({ action: "accept", content: { n: 7 } });
    expect(ElicitResultSchema.safeParse(result).success).toBe(true);
    expect(t.written()).toContain("    expected a number\n");
    expect(t.written()).toContain("    expected at least 1\n");
    expect(t.written()).toContain("    expected at most 10\n");
    expect(t.written()).toContain("    expected a whole number\n");
  });

  it("a required field left empty is asked again (a number was sent as 0); an optional one is left out", async () => {
    const t = terminal(["", "3", "", "y"]);
    const result = await t.surface.elicit(
      {
        server: "s",
        message: "m",
        requestedSchema: form({ n: { type: "number" }, note: { type: "string" } }, ["n"]),
      },
      never,
    );
    expect(result).toEqual({ action: "accept", content: { n: 3 } });
    expect(t.written()).toContain("    an answer is required\n");
  });

  it("a choice must be one of the values (or their titles); string length and format are checked", async () => {
    const t = terminal(["Gamma", "Beta", "ab", "abcd", "not-an-email", "a@b.co", "y"]);
    const result = await t.surface.elicit(
      {
        server: "s",
        message: "m",
        requestedSchema: form(
          {
            e: { type: "string", enum: ["a", "b"], enumNames: ["Alpha", "Beta"] },
            code: { type: "string", minLength: 3, maxLength: 4 },
            mail: { type: "string", format: "email" },
          },
          ["e", "code", "mail"],
        ),
      },
      never,
    );
    expect(result).toEqual({ action: "accept", content: { e: "b", code: "abcd", mail: "a@b.co" } });
    expect(t.written()).toContain("    expected one of the choices\n");
    expect(t.written()).toContain("    expected at least 3 characters\n");
    expect(t.written()).toContain("    expected an email address\n");
  });

  it("a default the schema does not allow is not offered: an empty answer leaves an optional field out", async () => {
    const t = terminal(["", "", "y"]);
    const result = await t.surface.elicit(
      {
        server: "s",
        message: "m",
        requestedSchema: form(
          {
            level: { type: "integer", minimum: 1, maximum: 10, default: 200 },
            size: { type: "integer", maximum: 10, default: 5 },
          },
          [],
        ),
      },
      never,
    );
    // Before, the empty answer took 200, which was refused again and again: the field could not be skipped.
    expect(result).toEqual({ action: "accept", content: { size: 5 } });
    expect(t.written()).toContain("  level: ");
    expect(t.written()).toContain("  size [5]: ");
  });

  it("stdin closing while a field is asked again cancels the form", async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true });
    const output = new PassThrough();
    let asked = 0;
    output.on("data", (chunk: Buffer) => {
      if (!chunk.toString().endsWith(": ")) return;
      asked += 1;
      if (asked === 1) input.write("x\n");
      else input.end();
    });
    const result = await terminalApprovals({ input, output }).elicit(
      { server: "s", message: "m", requestedSchema: form({ n: { type: "number" } }, ["n"]) },
      never,
    );
    expect(result).toEqual({ action: "cancel" });
  });
});

describe("answerProblem", () => {
  it("takes values inside the bounds, exactly at them too", () => {
    const field = { type: "number", minimum: 1, maximum: 10 };
    expect(answerProblem(field, 1, [])).toBeUndefined();
    expect(answerProblem(field, 10, [])).toBeUndefined();
    expect(answerProblem({ type: "string", maxLength: 2 }, "éé", [])).toBeUndefined();
    expect(answerProblem({ type: "string", maxLength: 2 }, "ééé", [])).toBe("expected at most 2 characters");
  });

  it("checks uri, date and date-time formats and multi-select choices", () => {
    expect(answerProblem({ type: "string", format: "uri" }, "https://example.com/x", [])).toBeUndefined();
    expect(answerProblem({ type: "string", format: "uri" }, "example.com", [])).toMatch(/expected a URI/);
    expect(answerProblem({ type: "string", format: "date" }, "2025-01-31", [])).toBeUndefined();
    expect(answerProblem({ type: "string", format: "date" }, "31/01/2025", [])).toMatch(/YYYY-MM-DD/);
    expect(answerProblem({ type: "string", format: "date" }, "2025-02-30", [])).toMatch(/YYYY-MM-DD/);
    expect(answerProblem({ type: "string", format: "date" }, "2024-02-29", [])).toBeUndefined();
    expect(
      answerProblem({ type: "string", format: "date-time" }, "2025-01-31T09:30:00Z", []),
    ).toBeUndefined();
    expect(answerProblem({ type: "string", format: "date-time" }, "2025-01-31", [])).toMatch(/date and time/);
    expect(answerProblem({ type: "array", maxItems: 1 }, ["a"], ["a", "b"])).toBeUndefined();
    expect(answerProblem({ type: "array" }, ["a", "z"], ["a", "b"])).toBe('"z" is not one of the choices');
    expect(answerProblem({ type: "array", maxItems: 1 }, ["a", "b"], ["a", "b"])).toBe(
      "expected at most 1 choice",
    );
  });
});
