import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { entry, useHubs } from "./harness.js";

const SERVER = resolve(import.meta.dirname, "../../fixtures/mcp/discover-versions-server.mjs");
const SPEAKS =
  "svc speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05, 2024-10-07 (and 2026-07-28 through server/discover): configure the server to offer one of them, or update svc";

const ctx = useHubs();

/** A server that refuses initialize and whose server/discover lists only `versions`, under `protocol`. */
async function lastError(protocol: string, versions: string[]): Promise<string | undefined> {
  const h = ctx.hub(ctx.home, {
    future: entry({ command: process.execPath, args: [SERVER, ...versions], protocol }),
  });
  const status = await h.settled("future");
  expect(status.state).toBe("failed");
  return status.lastError;
}

describe("a server whose server/discover lists no protocol version svc speaks", () => {
  it("protocol: auto names its versions and the ones svc speaks, not 'check that this is an MCP server'", async () => {
    expect(await lastError("auto", ["2099-01-01"])).toBe(
      `mcp_servers.future: initialize was refused (MCP error -32022: Unsupported protocol version), and the server/discover probe of the 2026-07-28 revision that protocol: auto tries next found no version svc speaks (server/discover lists 2099-01-01, not 2026-07-28) — ${SPEAKS}`,
    );
  });

  it("protocol: stateless says the same after its legacy retry", async () => {
    expect(await lastError("stateless", ["2099-01-01", "2100-01-01"])).toBe(
      `mcp_servers.future: server/discover failed (server/discover lists 2099-01-01, 2100-01-01, not 2026-07-28) and the legacy initialize retry failed (MCP error -32022: Unsupported protocol version) — ${SPEAKS}`,
    );
  });

  it("an empty list is named so", async () => {
    expect(await lastError("auto", [])).toContain(
      "(server/discover lists no versions, not 2026-07-28) — svc speaks 2025-11-25,",
    );
  });
});
