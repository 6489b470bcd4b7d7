import { describe, expect, it } from "vitest";
import { policyApprovals } from "../../../src/actors/mcp/approvals.js";
import { silentLogger } from "../../../src/io/log.js";
import { createGatewayMetrics } from "../../../src/io/metrics/gatewayMetrics.js";
import { stdioEntry, useHubs } from "./harness.js";

const hubs = useHubs();

describe("MCP tool-call durations in svc_mcp_tool_call_duration_seconds", { timeout: 30_000 }, () => {
  it("observes each call by server and outcome (an isError result counts as error)", async () => {
    let t = 1_000;
    const metrics = createGatewayMetrics({ runs: () => ({ waiting: 0, active: 0 }), mcpStates: () => [] });
    const hub = hubs.hub(
      hubs.home,
      { fx: stdioEntry("legacy", { trust: "full" }) },
      {
        approvals: policyApprovals("allow", silentLogger()),
        onToolCall: metrics.toolCall,
        now: () => (t += 250),
      },
    );
    await hub.call("fx", "add", { a: 1, b: 2 });
    await hub.call("fx", "fail", {});
    const { text } = await metrics.render();
    expect(text).toContain('svc_mcp_tool_call_duration_seconds_count{server="fx",outcome="ok"} 1');
    expect(text).toContain('svc_mcp_tool_call_duration_seconds_count{server="fx",outcome="error"} 1');
    expect(text).toContain('svc_mcp_tool_call_duration_seconds_sum{server="fx",outcome="ok"} 0.25');
  });
});
