import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { readStatusFile } from "../../../src/io/mcp/statusFile.js";
import { oneJobStore } from "../../helpers/cronJobs.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { STDIO_FIXTURE } from "./harness.js";

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe("a gateway with the webhook adapter off", () => {
  it("runs for its MCP servers alone, listens on no port and says how to enable the adapter", async () => {
    gw = await startTestGateway({
      config: {
        platforms: { webhook: { enabled: false } },
        mcp_servers: { fixture: { command: process.execPath, args: [STDIO_FIXTURE] } },
      },
    });
    const running = gw;
    expect(running.gateway.port).toBe(0);
    const messages = () => running.logs().map((l) => l.msg);
    expect(messages()).toContainEqual(expect.stringMatching(/Adapter disabled.*svc gateway setup/));
    expect(messages().some((m) => m.includes("Listening on"))).toBe(false);
    await vi.waitFor(
      () =>
        expect(readStatusFile(join(running.home.dir, "mcp-cache"))?.servers).toContainEqual(
          expect.objectContaining({ name: "fixture", state: "connected" }),
        ),
      { timeout: 10_000 },
    );
  });

  it("runs for its cron jobs alone: a profile's stored job is something to run", async () => {
    gw = await startTestGateway({
      config: { platforms: { webhook: { enabled: false } } },
      files: {
        "profiles/work/cron/jobs.json": oneJobStore({
          name: "nightly",
          prompt: "p",
          next_run: "2099-01-01T00:00:00.000Z",
        }),
      },
    });
    expect(gw.gateway.port).toBe(0);
    expect(gw.logs().map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/Adapter disabled.*running MCP servers and cron jobs only/),
    );
  });

  it("refuses to start when there is nothing to run, naming the key and the fix", async () => {
    await expect(
      startTestGateway({ config: { platforms: { webhook: { enabled: false } } } }),
    ).rejects.toThrow(/platforms\.webhook\.enabled is false.*svc gateway setup/);
  });
});
