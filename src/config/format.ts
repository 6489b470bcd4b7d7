import type { z } from "zod";

function describeInput(input: unknown): string {
  if (input === undefined) return "nothing";
  try {
    const text = JSON.stringify(input);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  } catch {
    return typeof input;
  }
}

const EXPECTED_WORDS: Record<string, string> = {
  number: "a number",
  boolean: "true or false",
  string: "a string",
  array: "a list",
  object: "a mapping",
  record: "a mapping",
};

/** One line per problem: `<file>: <key.path>: <what is wrong>`. */
export function formatIssue(file: string, issue: z.core.$ZodIssue): string {
  const path = issue.path.map(String).join(".") || "(top level)";
  let message = issue.message;
  if (issue.code === "invalid_type") {
    const expected = EXPECTED_WORDS[issue.expected] ?? issue.expected;
    message =
      issue.input === undefined
        ? `missing — expected ${expected}`
        : `expected ${expected}, got ${describeInput(issue.input)}`;
  } else if (issue.code === "unrecognized_keys") {
    message = `unknown key${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")} — check the spelling (see docs/configuration.md)`;
  } else if (issue.code === "invalid_value") {
    message = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, got ${describeInput(issue.input)}`;
  }
  return `${file}: ${path}: ${message}`;
}

export function formatIssues(file: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues.map((issue) => formatIssue(file, issue)).join("\n");
}
