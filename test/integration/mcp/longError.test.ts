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

/** What the server's error for "long" reads as the MCP SDK's client gives it (see the fixture), redacted. */
const described = `MCP error -32603: upstream refused token [redacted]: ${"detail ".repeat(150_000)}last token [redacted]`;
/**
 * Cut before the last delimiter at or before 2,000 characters (here a space), never inside a word, once the
 * credentials are redacted.
 */
const cutAt2000 = (text: string) => {
  const cut = text.lastIndexOf(" ", 2000);
  return `${text.slice(0, cut)}… (${text.length - cut} more characters)`;
};
const LONG = `"long" failed: ${cutAt2000(described)}`;
const SHORT = '"short" failed: MCP error -32603: upstream refused token [redacted]';

/** A credential holding a delimiter: the cut at 2,000 characters falls after its colon (see the fixture). */
const SPLIT_TOKEN = "pw12345678:SECRETtail99";
/** What the fixture's "split" and "consent-split" say around it, with it redacted: cut a few words after it. */
const splitMessage = (prefix: number) =>
  `${"ab ".repeat((1980 - prefix) / 3)}key [redacted] and more text ${"x ".repeat(100)}`;
const SPLIT = `"split" failed: ${cutAt2000(`MCP error -32603: ${splitMessage(18)}`)}`;

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
    expect(failure.length).toBeLessThan(2400);
    expect(failure).toBe(
      `mcp_servers.long: "consent" needs the user to open https://example.com/consent (${cutAt2000(message)}) first (URL-mode elicitation; svc opens no browser) — open it, then call the tool again`,
    );
  });
});

describe("a credential holding a delimiter where the message is cut", () => {
  it("is redacted before the cut: neither the call's error nor a URL elicitation's message shows its start", async () => {
    const hub = hubs.hub(hubs.home, {
      long: entry({ command: process.execPath, args: [SERVER], env: { API_TOKEN: SPLIT_TOKEN } }),
    });
    expect(await hub.settled("long")).toMatchObject({ state: "connected" });
    const failure = (tool: string) =>
      hub.call("long", tool, {}).then(
        () => "answered",
        (err: Error) => err.message,
      );
    const split = await failure("split");
    expect(split).not.toContain("pw12345678");
    expect(split).toBe(`mcp_servers.long: ${SPLIT}`);
    const consent = await failure("consent-split");
    expect(consent).not.toContain("pw12345678");
    expect(consent).toBe(
      `mcp_servers.long: "consent-split" needs the user to open https://example.com/consent (${cutAt2000(splitMessage(0))}) first (URL-mode elicitation; svc opens no browser) — open it, then call the tool again`,
    );
  });
});

describe("a credential holding a delimiter where svc's quote of an answer it cannot read is cut", () => {
  it("is redacted before the cut (300 characters): the call's error shows none of it", async () => {
    const hub = hubs.hub(hubs.home, {
      long: entry({ command: process.execPath, args: [SERVER], env: { API_TOKEN: SPLIT_TOKEN } }),
    });
    expect(await hub.settled("long")).toMatchObject({ state: "connected" });
    const failure = await hub.call("long", "unreadable", {}).then(
      () => "answered",
      (err: Error) => err.message,
    );
    const quote = JSON.stringify(`${"ab ".repeat(95)}key [redacted] and more`);
    expect(failure).toBe(
      `mcp_servers.long: "unreadable" failed: MCP error -32603: the server's answer has a result that is not a JSON object: ${quote.slice(0, 300)}…`,
    );
    expect(failure).not.toContain("pw12345678");
  });
});

describe("a credential holding a delimiter where a refused connect's message is cut", () => {
  const refusing = (method: string, env: Record<string, string>) =>
    entry({ command: process.execPath, args: [SERVER, method], env });

  it("a refused tools/list: the entry's credential is redacted before the cut", async () => {
    const hub = hubs.hub(hubs.home, { long: refusing("tools/list", { API_TOKEN: SPLIT_TOKEN }) });
    const status = await hub.settled("long");
    expect(status.state).toBe("failed");
    expect(status.lastError).not.toContain("pw12345678");
    expect(status.lastError).toBe(
      `mcp_servers.long: tools/list failed: ${cutAt2000(`MCP error -32603: ${splitMessage(18)}`)}`,
    );
  });

  it("a refused initialize: so is the gateway's own secret (not the entry's credential)", async () => {
    const hub = hubs.hub(
      hubs.home,
      { long: refusing("initialize", { QUOTED: SPLIT_TOKEN }) },
      { hiddenValues: () => [SPLIT_TOKEN] },
    );
    const status = await hub.settled("long");
    expect(status.state).toBe("failed");
    expect(status.lastError).not.toContain("pw12345678");
    expect(status.lastError).toBe(`mcp_servers.long: ${cutAt2000(`MCP error -32603: ${splitMessage(18)}`)}`);
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

  it("prints a cut message without the start of a credential the cut fell in", async () => {
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          long: { command: process.execPath, args: [SERVER], env: { API_TOKEN: `\${LONG_TOKEN}` } },
        },
      }),
    );
    home.write(".env", `LONG_TOKEN=${SPLIT_TOKEN}\n`, 0o600);
    expect(await call("split")).toEqual({ code: 1, stdout: "", stderr: `svc: mcp_servers.long: ${SPLIT}\n` });
  }, 60_000);
});
