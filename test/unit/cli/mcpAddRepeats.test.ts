import { describe, expect, it } from "vitest";
import { collectHeader } from "../../../src/cli/mcp/edit.js";
import { collectEnv } from "../../../src/cli/mcp/envOption.js";

describe("svc mcp add --env / --header given twice", () => {
  it("collects distinct names (values may hold = and :)", () => {
    expect(collectEnv("B=x=y", collectEnv("A=1"))).toEqual({ A: "1", B: "x=y" });
    expect(collectHeader("X-B: a:b ", collectHeader("X-A: 1"))).toEqual({ "X-A": "1", "X-B": "a:b" });
    // Environment variable names are case-sensitive on Linux: two spellings are two variables.
    expect(collectEnv("a=2", collectEnv("A=1"))).toEqual({ A: "1", a: "2" });
  });

  it("refuses a repeated --env name rather than dropping its first value", () => {
    expect(() => collectEnv("A=2", collectEnv("A=1"))).toThrow(
      "--env A is given twice — a server's environment holds one value per variable: keep one",
    );
  });

  it("refuses a repeated --header, also in another case (one HTTP header)", () => {
    expect(() => collectHeader("X-Api: b", collectHeader("X-Api: a"))).toThrow(
      "--header X-Api is given twice — a server entry holds one value per header: keep one",
    );
    expect(() => collectHeader("authorization: Bearer b", collectHeader("Authorization: Bearer a"))).toThrow(
      "--header Authorization and --header authorization are one header (header names ignore case) — keep one",
    );
  });

  it("refuses a --header value no HTTP header can carry (every connect would fail), or one without its name, never quoting it", () => {
    const refused = (value: string) => {
      try {
        collectHeader(value);
      } catch (err) {
        return (err as Error).message;
      }
      return "accepted";
    };
    const lineBreak = refused("Authorization: Bearer sk-1\nsk-2");
    expect(lineBreak).toBe(
      "--header Authorization: the value contains a line break or NUL character, which an HTTP header cannot carry — give it on one line; nothing was written",
    );
    const euro = refused("X-Team: €uro-sk-3");
    expect(euro).toBe(
      "--header X-Team: the value contains a character an HTTP header cannot carry (one outside Latin-1, such as € or an emoji) — write it in ASCII, percent-encoded if the server decodes it; nothing was written",
    );
    // A header given without its name is usually the credential itself: not echoed either.
    expect(refused("Bearer sk-live-4")).toBe(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
      "--header: expected Name: value, got text with no colon (not shown: it may be a credential) — e.g. --header 'Authorization: Bearer ${TOKEN}'",
    );
    expect(refused(": sk-live-5")).toContain("got no name before the colon (not shown");
    // Latin-1 bytes and ${VAR} references (rendered at connect, and checked there) pass.
    expect(collectHeader("X-Name: Müller")).toEqual({ "X-Name": "Müller" });
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    expect(collectHeader("X-Key: ${KEY}")).toEqual({ "X-Key": "${KEY}" });
  });
});
