import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { entry, useHubs } from "./harness.js";

const DYING_TASK_SERVER = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/dying-task-server.mjs"),
);
const ctx = useHubs();

describe("a stdio server whose process dies while its task runs", () => {
  it("fails the call as outcome_uncertain saying how the process ended, with its stderr, as a plain call does", async () => {
    const h = ctx.hub(ctx.home, { stt: entry({ command: process.execPath, args: [DYING_TASK_SERVER] }) });
    expect((await h.settled("stt")).state).toBe("connected");
    await expect(h.call("stt", "job", {})).rejects.toMatchObject({
      code: "outcome_uncertain",
      message:
        'mcp_servers.stt: following the task of "job" failed (the server process exited (code 3) — its stderr: boom: out of memory in job); it may or may not have run — verify its effect before calling it again',
    });
  });
});
