import { resolve } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { loadInProcessCli, runInProcess } from "../../helpers/inProcessCli.js";
import { entry, useHubs } from "./harness.js";

/** Tools answering a block the MCP SDK's schema refuses beside a readable one (see the fixture). */
const SERVER = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/unreadable-blocks-server.mjs"),
);

const hubs = useHubs();

/** The registered tools' content, as the model and `svc mcp call --json` get it. */
const content = (result: unknown) => (result as { content: unknown[] }).content;

describe("a hand-written server answering content blocks the MCP SDK's schema refuses", () => {
  it("costs the call only those blocks: the rest of the result reaches the agent", async () => {
    const hub = hubs.hub(hubs.home, { raw: entry({ command: process.execPath, args: [SERVER, "--raw"] }) });
    expect(await hub.settled("raw")).toMatchObject({ state: "connected" });
    expect(content(await hub.call("raw", "weird", {}))).toEqual([
      { type: "text", text: "before" },
      {
        type: "text",
        text: '[content block of type "video" — not shown: svc does not read this MCP content type]',
      },
    ]);
    expect(content(await hub.call("raw", "nulltext", {}))).toEqual([
      { type: "text", text: "ok part" },
      { type: "text", text: "" },
    ]);
    expect(content(await hub.call("raw", "linknoname", {}))).toEqual([
      { type: "resource_link", uri: "file:///r.txt", name: "file:///r.txt" },
    ]);
    // A block still unreadable fails the call in one line naming the field.
    await expect(hub.call("raw", "numbertext", {})).rejects.toThrow(
      /^mcp_servers\.raw: "numbertext" failed: the server's answer is malformed: content\.1\.text: expected string, received number$/,
    );
  });
});

describe("an MCP SDK server refusing its own tool's result", () => {
  it("fails the call in one line naming the field and that the tool ran, not zod's issues as JSON", async () => {
    const hub = hubs.hub(hubs.home, { sdk: entry({ command: process.execPath, args: [SERVER] }) });
    expect(await hub.settled("sdk")).toMatchObject({ state: "connected" });
    const failure = await hub.call("sdk", "weird", {}).then(
      () => "answered",
      (err: Error) => err.message,
    );
    expect(failure).toBe(
      'mcp_servers.sdk: "weird" failed: MCP error -32602: Invalid tools/call result: content.1.type: expected one of "text", "image", "audio", "resource_link", "resource" — the server\'s MCP SDK refused the result its own tool returned, so the tool ran but its result was not sent (a fault of the server)',
    );
  });
});

describe("svc mcp call of such tools", () => {
  let home: TempHome;
  beforeAll(() => loadInProcessCli("mcp"), 60_000);
  beforeEach(() => {
    home = tempHome();
  });
  afterEach(() => home.cleanup());

  const call = (server: string, tool: string) =>
    runInProcess(["mcp", "call", server, tool], {
      PATH: process.env.PATH ?? "",
      HOME: home.dir,
      SVC_HOME: home.dir,
    });

  it("prints the readable blocks and a line for the others, or the server's refusal in one line", async () => {
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          raw: { command: process.execPath, args: [SERVER, "--raw"] },
          sdk: { command: process.execPath, args: [SERVER] },
        },
      }),
    );
    expect(await call("raw", "weird")).toMatchObject({
      code: 0,
      stdout:
        'before\n[content block of type "video" — not shown: svc does not read this MCP content type]\n',
    });
    expect(await call("raw", "linknoname")).toMatchObject({
      code: 0,
      stdout: "[resource link: file:///r.txt (file:///r.txt)]\n",
    });
    const refused = await call("sdk", "nulltext");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      'svc: mcp_servers.sdk: "nulltext" failed: MCP error -32602: Invalid tools/call result: content.1.text: expected string, received null — the server\'s MCP SDK refused the result its own tool returned, so the tool ran but its result was not sent (a fault of the server)\n',
    );
  }, 60_000);
});
