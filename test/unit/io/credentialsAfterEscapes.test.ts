import { describe, expect, it } from "vitest";
import { redactCredentials } from "../../../src/io/credentials.js";

describe("redactCredentials: a scheme after an escaped control character", () => {
  it("hides a Bearer or Basic credential right after `\\n`, `\\r`, `\\t`, `\\b` or `\\f` as a JSON dump writes them", () => {
    for (const escaped of ["\\n", "\\r", "\\t", "\\b", "\\f", "\\r\\n"]) {
      expect(redactCredentials(`"curl -v${escaped}Bearer sk-abcdefghijklmnop2"`)).toBe(
        `"curl -v${escaped}Bearer [redacted]"`,
      );
      expect(redactCredentials(`"x${escaped}Basic dXNlcjpwYTU1d29yZA=="`)).toBe(
        `"x${escaped}Basic [redacted]"`,
      );
    }
    // The whole dump: one after a space and one after an escaped newline, both hidden.
    const dump = JSON.stringify(
      { a: "Bearer sk-abcdefghijklmnop1", b: "curl -v\nBearer sk-abcdefghijklmnop2" },
      null,
      2,
    );
    expect(redactCredentials(dump)).toBe(
      JSON.stringify({ a: "Bearer [redacted]", b: "curl -v\nBearer [redacted]" }, null, 2),
    );
  });

  it("keeps a word that merely ends in the scheme's name, and the words after a scheme, as before", () => {
    for (const kept of [
      "Flagbearer of the realm",
      "FlagBearer sk-abcdefghijklmnop3",
      "xBearer sk-abcdefghijklmnop4",
      "nBearer sk-abcdefghijklmnop5",
      "the\\nBearer token goes here",
      "line one\\nBasic authentication required",
      'WWW-Authenticate: Bearer realm="mcp"',
    ])
      expect(redactCredentials(kept)).toBe(kept);
  });
});
