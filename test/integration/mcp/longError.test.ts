import { resolve } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";
import { entry, useHubs } from "./harness.js";

/** A hand-written server answering "long" with a JSON-RPC error of over a megabyte, "short" with a short one. */
const SERVER = await bundledFixture(resolve(import.meta.dirname, "../../fixtures/mcp/long-error-server.mjs"));

const TOKEN = "tok-4f9a2c71e0b3";

/** What the server's error for "long" reads as the MCP SDK's client gives it (see the fixture). */
const described = `MCP error -32603: upstream refused token ${TOKEN}: ${"detail ".repeat(150_000)}last token ${TOKEN}`;
/** Cut before the last delimiter at or before 2,000 characters (here a space), never inside a word. */
const cut = described.lastIndexOf(" ", 2000);
const LONG = `"long" failed: ${described.slice(0, cut).replace(TOKEN, "[redacted]")}… (${described.length - cut} more characters)`;
const SHORT = '"short" failed: MCP error -32603: upstream refused token [redacted]';

const hubs = useHubs();

describe("a server answering a call with an error message of a megabyte", () => {
  it("fails the call with the message cut at 2,000 characters and how much more there was, its credential redacted", async () => {
    const hub = hubs.hub(hubs.home, {
      long: entry({ command: process.execPath, args: [SERVER], env: { API_TOKEN: TOKEN } }),
    });
    expect(await hub.settled("long")).toMatchObject({ state: "connected" });
    const failure = (tool: string) =>
      hub.call("long", tool, {}).then(
        () => "answered",
        (err: Error) => err.message,
      );
    const long = await failure("long");
    expect(long.length).toBeLessThan(2200);
    expect(long).toBe(`mcp_servers.long: ${LONG}`);
    expect(long).not.toContain(TOKEN);
    // A short error is quoted whole.
    expect(await failure("short")).toBe(`mcp_servers.long: ${SHORT}`);
  });

  it("as a URL elicitation's message: cut the same way, the URL whole", async () => {
    const hub = hubs.hub(hubs.home, {
      long: entry({ command: process.execPath, args: [SERVER], env: { API_TOKEN: TOKEN } }),
    });
    expect(await hub.settled("long")).toMatchObject({ state: "connected" });
    const failure = await hub.call("long", "consent", {}).then(
      () => "answered",
      (err: Error) => err.message,
    );
    const message = described.slice("MCP error -32603: ".length);
    const at = message.lastIndexOf(" ", 2000);
    expect(failure.length).toBeLessThan(2400);
    expect(failure).toBe(
      `mcp_servers.long: "consent" needs the user to open https://example.com/consent (${message.slice(0, at).replace(TOKEN, "[redacted]")}… (${message.length - at} more characters)) first (URL-mode elicitation; svc opens no browser) — open it, then call the tool again`,
    );
  });
});

describe("svc mcp call of a tool answering such an error", () => {
  let home: TempHome;
  beforeAll(() => loadInProcessCli("mcp"), 60_000);
  beforeEach(() => {
    home = tempHome();
  });
  afterEach(() => home.cleanup());

  const call = (tool: string) =>
    runInProcess(["mcp", "call", "long", tool], {
      PATH: process.env.PATH ?? "",
      HOME: home.dir,
      SVC_HOME: home.dir,
    });

  it("prints the cut message, and a short one whole", async () => {
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          long: { command: process.execPath, args: [SERVER], env: { API_TOKEN: `\${LONG_TOKEN}` } },
        },
      }),
    );
    home.write(".env", `LONG_TOKEN=${TOKEN}\n`, 0o600);
    const long = await call("long");
    expect(long.stderr.length).toBeLessThan(2200);
    expect(long).toEqual({ code: 1, stdout: "", stderr: `svc: mcp_servers.long: ${LONG}\n` });
    expect(await call("short")).toEqual({ code: 1, stdout: "", stderr: `svc: mcp_servers.long: ${SHORT}\n` });
  }, 60_000);
});
