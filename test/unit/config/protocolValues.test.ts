import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

function refusal(protocol: string): string {
  const h = tempHome();
  home = h;
  const file = h.write(
    "config.yaml",
    `mcp_servers:\n  a:\n    url: http://127.0.0.1:9/mcp\n    protocol: ${protocol}\n`,
  );
  try {
    loadConfig({ home: h.dir, env: {} });
  } catch (err) {
    return (err as Error).message.replaceAll(file, "FILE");
  }
  throw new Error("loaded without an error");
}

const EXPECTED = 'FILE: mcp_servers.a.protocol: expected one of "auto", "stateless", "legacy", got';
const SEE = "";

describe("an mcp_servers protocol written as a revision or a transport says which era or key it means", () => {
  it("a protocol revision date names the era that speaks it", () => {
    expect(refusal("2026-07-28")).toBe(
      `${EXPECTED} "2026-07-28" — protocol names an era, not a revision: stateless speaks 2026-07-28, legacy the revisions before it (2025-11-25 and earlier); auto, the default, tries legacy first, then stateless${SEE}`,
    );
    expect(refusal('"2025-06-18"')).toContain(
      '"2025-06-18" — protocol names an era, not a revision: stateless speaks 2026-07-28, legacy the revisions before it',
    );
  });

  it("a transport name written as protocol names the transport key", () => {
    expect(refusal("sse")).toBe(
      `${EXPECTED} "sse" — protocol names the MCP protocol era; the transport follows the entry: a command runs over stdio, a url speaks Streamable HTTP (or SSE, with transport: sse)${SEE}`,
    );
    // Not `transport: stdio` or `transport: http`, which an entry of the other kind refuses as contradicting it.
    for (const written of ["streamable-http", "stdio", "http"])
      expect(refusal(written)).toContain(
        "the transport follows the entry: a command runs over stdio, a url speaks",
      );
  });

  it("another value keeps the plain list (and a near miss its did-you-mean)", () => {
    expect(refusal("modern")).toBe(`${EXPECTED} "modern"${SEE}`);
    expect(refusal("Auto")).toBe(`${EXPECTED} "Auto" — did you mean "auto"?${SEE}`);
  });
});
