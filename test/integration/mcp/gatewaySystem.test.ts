import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AnyActorRef, InspectionEvent } from "xstate";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { STDIO_FIXTURE } from "./harness.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe("MCP connections in the gateway's root system (DESIGN.md 4)", () => {
  it("runs each server's mcpConnection actor as a child of the root, visible to the inspector", async () => {
    const events: InspectionEvent[] = [];
    gw = await startTestGateway({
      config: webhookConfig(
        {},
        {},
        { mcp_servers: { fixture: { command: process.execPath, args: [STDIO_FIXTURE] } } },
      ),
      inspect: (event) => events.push(event),
    });
    const actors = () =>
      events.filter((e) => e.type === "@xstate.actor").map((e) => e.actorRef as AnyActorRef);
    await vi.waitFor(() => expect(actors().map((a) => a.id)).toContain("mcp:fixture"), { timeout: 10_000 });
    const child = actors().find((a) => a.id === "mcp:fixture");
    const parent = child?._parent as AnyActorRef | undefined;
    expect((parent as unknown as { logic?: { id?: string } } | undefined)?.logic?.id).toBe("gateway");
    expect(parent?._parent).toBeUndefined();
  });
});

describe("the gateway's first connect of each server", () => {
  it("succeeds at once: no failed attempt, no warning, no retry after a backoff", async () => {
    gw = await startTestGateway({
      config: webhookConfig(
        {},
        {},
        { mcp_servers: { fixture: { command: process.execPath, args: [STDIO_FIXTURE] } } },
      ),
    });
    const live = gw;
    await vi.waitFor(
      () => expect(readStatusFile(join(live.home.dir, "mcp-cache"))?.servers[0]?.state).toBe("connected"),
      { timeout: 5000 },
    );
    const mine = live.logs().filter((l) => l.server === "fixture");
    expect(mine.filter((l) => l.level >= 40)).toEqual([]);
    expect(mine.filter((l) => l.msg === "[mcp] fixture: connected")).toHaveLength(1);
  });
});
