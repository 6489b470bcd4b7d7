import { afterEach, describe, expect, it } from "vitest";
import { oauthProviderFor } from "../../../src/actors/oauth/provider.js";
import { svcPaths } from "../../../src/config/paths.js";
import { mcpServerSchema } from "../../../src/config/sections/mcp.js";
import { connectServer } from "../../../src/io/mcp/connect.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** A background connect (as the gateway's) of an auth: oauth server with no login; port 9 is refused at once. */
async function connectError(
  name: string,
  transport?: "sse",
  protocol: "auto" | "stateless" | "legacy" = "auto",
): Promise<string> {
  const entry = mcpServerSchema.parse({
    url: `http://127.0.0.1:9/${transport === "sse" ? "sse" : "mcp"}`,
    auth: "oauth",
    protocol,
    ...(transport === undefined ? {} : { transport }),
  });
  const connect = connectServer(name, entry, {
    scope: () => ({ secrets: {}, env: {} }),
    interactive: false,
    oauthProviderFor: (server, e, { interactive }) =>
      oauthProviderFor(server, e, { interactive, paths: svcPaths(home.dir) }),
  });
  return connect.then(
    () => "connected",
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
}

describe("OAuth errors of an SSE server's connect", () => {
  it("read as Streamable HTTP's: the login to run, without the SDK's 'SSE error: ' wrapping the server's name", async () => {
    home = tempHome();
    expect(await connectError("hp")).toBe("hp: not logged in — run `svc mcp login hp`");
    expect(await connectError("sp", "sse")).toBe("sp: not logged in — run `svc mcp login sp`");
  });
});

describe("OAuth errors of a protocol: stateless server's connect", () => {
  it("are reported once: the legacy initialize retry is not made, since the error says nothing of the era", async () => {
    home = tempHome();
    expect(await connectError("hs", undefined, "stateless")).toBe(
      "hs: not logged in — run `svc mcp login hs`",
    );
    expect(await connectError("ss", "sse", "stateless")).toBe("ss: not logged in — run `svc mcp login ss`");
  });
});

describe("OAuth errors of a server whose name reads like a protocol era", () => {
  it("are not taken for the server refusing initialize as a stateless server (auto: no server/discover probe; legacy: no advice to change protocol)", async () => {
    home = tempHome();
    const advice = "stateless: not logged in — run `svc mcp login stateless`";
    expect(await connectError("stateless")).toBe(advice);
    expect(await connectError("stateless", "sse")).toBe(advice);
    expect(await connectError("stateless", undefined, "legacy")).toBe(advice);
  });
});
