import { afterEach, describe, expect, it } from "vitest";
import {
  createMcpEndpointHost,
  type McpEndpointHost,
  type RunEndpoint,
} from "../../../src/agent/mcpEndpoint/index.js";
import { recordingTool } from "../../helpers/commandAgentEndpoint.js";
import { toolContext } from "../../helpers/toolContext.js";

/**
 * A command agent's tool call through `SVC_MCP_URL` whose arguments hold a number a double does not hold (an
 * id past 2^53, `1e400`) is refused as a model run's is (docs/agent-tools.md): the tool is not run (an MCP
 * tool's server never gets a neighbouring id) and the agent gets the model run's message as a tool error.
 * The bodies are POSTed as text, as an agent in another language writes them (JSON.stringify cannot write
 * such a number). Real loopback sockets.
 */

let host: McpEndpointHost | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

/** The JSON-RPC answer to `body`, POSTed as it is written. */
async function post(endpoint: RunEndpoint, body: string): Promise<unknown> {
  const response = await fetch(endpoint.url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${endpoint.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body,
  });
  expect(response.status).toBe(200);
  return response.json();
}

const call = (args: string, meta = "") =>
  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__fixture__echo",${meta}"arguments":${args}}}`;

describe("the command agents' MCP endpoint and numbers a double does not hold", () => {
  it("refuses an id past 2^53 and 1e400 naming them, does not run the tool, and runs 1.0 and an id written as text", async () => {
    const ran: unknown[] = [];
    host = createMcpEndpointHost();
    const endpoint = await host.openRunEndpoint([recordingTool(ran, { id: {} })], toolContext());
    expect(await post(endpoint, call('{"id": 1234567890123456789}'))).toEqual({
      jsonrpc: "2.0",
      id: 7,
      result: {
        isError: true,
        content: [
          {
            type: "text",
            text: 'arguments hold 1234567890123456789, an integer past 2^53 that svc cannot pass exactly; the tool was not run — write it as a string ("1234567890123456789")',
          },
        ],
      },
    });
    expect(await post(endpoint, call('{"id": {"deep": [1.0e400]}}'))).toMatchObject({
      result: {
        isError: true,
        content: [
          { text: expect.stringMatching(/^arguments hold 1\.0e400, a number that svc cannot pass exactly/) },
        ],
      },
    });
    expect(ran).toEqual([]);
    // A client's own mark of the key svc uses does not refuse a call whose numbers a double holds.
    expect(
      await post(endpoint, call('{"id": 1.0}', '"_meta":{"svc/inexact-number":"1234567890123456789"},')),
    ).toMatchObject({ result: { content: [{ type: "text", text: "ran" }] } });
    expect(await post(endpoint, call('{"id": "1234567890123456789"}'))).toMatchObject({
      result: { content: [{ type: "text", text: "ran" }] },
    });
    expect(ran).toEqual([{ id: 1 }, { id: "1234567890123456789" }]);
  });
  it("refuses an id past 2^53 beside a _meta or another param nested 600 levels deep", async () => {
    const ran: unknown[] = [];
    host = createMcpEndpointHost();
    const endpoint = await host.openRunEndpoint([recordingTool(ran, { id: {} })], toolContext());
    const deep = `${"[".repeat(600)}${"]".repeat(600)}`;
    const refusal = {
      result: {
        isError: true,
        content: [
          { text: expect.stringMatching(/^arguments hold 1234567890123456789, an integer past 2\^53/) },
        ],
      },
    };
    expect(await post(endpoint, call('{"id": 1234567890123456789}', `"_meta":{"x":${deep}},`))).toMatchObject(
      refusal,
    );
    expect(await post(endpoint, call('{"id": 1234567890123456789}', `"other":${deep},`))).toMatchObject(
      refusal,
    );
    expect(ran).toEqual([]);
  });
});
