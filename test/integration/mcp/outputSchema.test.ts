import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

/**
 * A tool that lists an `outputSchema` must answer `structuredContent` that conforms to it (MCP, Tools:
 * "Clients SHOULD validate structured results against this schema"): svc checks it, as the MCP SDKs'
 * clients do, so a result that breaks the tool's own contract fails the call saying why instead of passing
 * on data the schema promised otherwise. A real stdio server on the SDK's low-level Server, which sends
 * what it is told.
 */

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/listed-tools-server.mjs"));
const OUTPUT = {
  type: "object",
  // `format` is an annotation (JSON Schema 2020-12): not checked, and nothing said about it.
  properties: {
    count: { type: "integer" },
    unit: { type: "string" },
    at: { type: "string", format: "date-time" },
  },
  required: ["count"],
};
const TOOLS = ["good", "wrong", "missing", "failed", "plain"].map((name) => ({
  name,
  inputSchema: { type: "object" },
  ...(name === "plain" ? {} : { outputSchema: OUTPUT }),
}));
const RESULTS = {
  good: {
    content: [{ type: "text", text: '{"count":3}' }],
    structuredContent: { count: 3, at: "yesterday" },
  },
  wrong: { content: [{ type: "text", text: '{"count":"three"}' }], structuredContent: { count: "three" } },
  missing: { content: [{ type: "text", text: "three" }] },
  failed: { content: [{ type: "text", text: "the disk is full" }], isError: true },
  plain: { content: [{ type: "text", text: "free text" }], structuredContent: { anything: true } },
};

let home: TempHome;
beforeEach(() => {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        gen: {
          command: process.execPath,
          args: [SERVER],
          env: { LISTED_TOOLS: JSON.stringify(TOOLS), LISTED_RESULTS: JSON.stringify(RESULTS) },
        },
      },
    }),
  );
});
afterEach(() => home.cleanup());

/**
 * `svc mcp call` run in this worker (test/helpers/inProcessCli.ts): everything it writes on stdout and
 * stderr is collected (the server's own stderr comes to svc through a pipe, not to the worker's), and its
 * outcome is its exit code, as a process of its own would report them.
 */
const call = (tool: string) =>
  runInProcess(["mcp", "call", "gen", tool, "--args", "{}"], {
    PATH: process.env.PATH ?? "",
    HOME: home.dir,
    SVC_HOME: home.dir,
  });

describe("a tool with an outputSchema", () => {
  it("a result whose structuredContent conforms is the result", async () => {
    const good = await call("good");
    expect(good.code).toBe(0);
    expect(good.stdout).toBe('{"count":3}\n');
    expect(good.stderr).toBe("");
  });

  it("structuredContent that does not match the schema fails the call, naming the first problem", async () => {
    const wrong = await call("wrong");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(
      'svc: mcp_servers.gen: "wrong" failed: its result does not match the outputSchema the server lists for it (structuredContent.count must be integer), so it is not used — a fault of the server\n',
    );
  });

  it("a result without structuredContent fails the call too; an isError result and a tool without an outputSchema are not checked", async () => {
    const missing = await call("missing");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      'svc: mcp_servers.gen: "missing" failed: its result does not match the outputSchema the server lists for it (it has no structuredContent), so it is not used — a fault of the server\n',
    );
    const failed = await call("failed");
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("the disk is full\n");
    expect(failed.stderr).toBe("svc: gen/failed returned an error result\n");
    const plain = await call("plain");
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe("free text\n");
  });
});
