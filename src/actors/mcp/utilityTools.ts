import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { SvcError } from "../../errors.js";
import type { McpSession } from "../../io/mcp/session.js";

function asText(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }] };
}

/** `list_resources`, `read_resource`, `list_prompts`, `get_prompt` (spec 2.5) answered from the session. */
export async function runUtilityTool(
  session: McpSession,
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number,
): Promise<CallToolResult> {
  const options = { timeout: timeoutMs };
  switch (name) {
    case "list_resources": {
      const [resources, templates] = await Promise.all([
        session.client.listResources({}, options),
        session.client.listResourceTemplates({}, options).catch(() => ({ resourceTemplates: [] })),
      ]);
      return asText({ resources: resources.resources, resourceTemplates: templates.resourceTemplates });
    }
    case "read_resource":
      if (typeof args.uri !== "string") throw new SvcError("mcp_call", "read_resource needs a string uri");
      return asText(await session.client.readResource({ uri: args.uri }, options));
    case "list_prompts":
      return asText((await session.client.listPrompts({}, options)).prompts);
    case "get_prompt": {
      if (typeof args.name !== "string") throw new SvcError("mcp_call", "get_prompt needs a string name");
      const promptArgs = (args.arguments ?? {}) as Record<string, string>;
      return asText(await session.client.getPrompt({ name: args.name, arguments: promptArgs }, options));
    }
    default:
      throw new SvcError("mcp_call", `unknown utility tool ${name}`);
  }
}
