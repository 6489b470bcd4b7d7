import { describe, expect, it } from "vitest";
import { collectEnv } from "../../../src/cli/mcp/edit.js";

const message = (value: string): string => {
  try {
    collectEnv(value);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`--env ${value} was taken`);
};

describe("svc mcp add --env KEY=value: a malformed one is refused without its value", () => {
  it("a name and its value joined otherwise (a space, docker's or compose's colon) names the name alone", () => {
    for (const value of ["GITHUB_TOKEN ghp_s3cr3tValue42", "GITHUB_TOKEN:ghp_s3cr3tValue42"]) {
      const text = message(value);
      expect(text).toBe(
        "--env: expected KEY=value, got text with no = (not shown: it may be a credential) — write GITHUB_TOKEN=<value>",
      );
    }
  });

  it("a value with no name before its =, or a bare word that is no variable name (the credential alone), is not shown", () => {
    expect(message("=ghp_s3cr3tValue42")).toBe(
      "--env: expected KEY=value, got no name before the = (not shown: it may be a credential)",
    );
    expect(message("ghp_s3cr3tValue42")).toBe(
      "--env: expected KEY=value, got text with no = (not shown: it may be a credential)",
    );
  });

  it("a variable's name alone, its value forgotten, is named", () => {
    expect(message("NOEQUALS")).toBe('--env: expected KEY=value, got "NOEQUALS"');
  });
});
