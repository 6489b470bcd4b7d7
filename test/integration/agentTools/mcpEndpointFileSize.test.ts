import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMcpEndpointHost, type McpEndpointHost } from "../../../src/agent/mcpEndpoint/index.js";
import { fileTools } from "../../../src/agent/tools/file.js";
import { createWorkspace } from "../../../src/agent/tools/index.js";
import { postToolsCall } from "../../helpers/commandAgentEndpoint.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { toolContext } from "../../helpers/toolContext.js";

/**
 * A command agent's `file_write` through `SVC_MCP_URL` is held to `tools.file.max_bytes`, as a model run's
 * is, not to a smaller cap of the endpoint's own: the content's JSON (escapes included) must get through.
 */

const MAX_BYTES = 1024 * 1024;

let home: TempHome;
let host: McpEndpointHost | undefined;
beforeEach(() => {
  home = tempHome();
});
afterEach(async () => {
  await host?.close();
  home.cleanup();
});

async function post(content: string): Promise<{ status: number; body: string }> {
  const workspace = await createWorkspace(home.dir, "d-1");
  host = createMcpEndpointHost({ fileMaxBytes: () => MAX_BYTES });
  const endpoint = await host.openRunEndpoint(
    fileTools({ max_bytes: MAX_BYTES }),
    toolContext({ workspace: async () => workspace }),
  );
  const response = await postToolsCall(endpoint, 1, {
    name: "file_write",
    arguments: { path: "big.txt", content },
  });
  return { status: response.status, body: await response.text() };
}

describe("the command agents' MCP endpoint and file_write's max_bytes", () => {
  it("takes a file_write up to tools.file.max_bytes, also when its JSON is larger (escaped characters)", async () => {
    const content = "\u0001".repeat(MAX_BYTES); // 1 MiB, 6 MiB as JSON (each byte written \u0001)
    const { status, body } = await post(content);
    expect(status).toBe(200);
    expect(body).toContain(`wrote ${content.length} bytes to big.txt`);
  });

  it("past that, says what the limit is", async () => {
    const { status, body } = await post("x".repeat(MAX_BYTES * 7));
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({
      error: { message: expect.stringMatching(/^Body too large: more than \d+ bytes/) },
    });
  });
});
