import { afterEach, describe, expect, it } from "vitest";
import { createProfileResources } from "../../../src/gateway/profileResources.js";
import type { Logger } from "../../../src/io/log.js";
import { CAN_FAIL_EXT4, failedExt4Dir, unmountFailedExt4 } from "../../helpers/failedExt4.js";

/**
 * A run session on an SVC_HOME whose file system turned read-only after an error: Node 20's recursive mkdir
 * reports the refused `sessions/` as ENOENT, so the log said `ENOENT: no such file or directory, mkdir …`.
 */

afterEach(unmountFailedExt4);

describe.runIf(CAN_FAIL_EXT4)("a run session on a file system turned read-only", () => {
  it("is logged with the read-only file system (EROFS), not a missing directory", async () => {
    const home = failedExt4Dir();
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    const resources = createProfileResources(home, logger, Date.now);
    resources.runJournal("default").record({ route: "pr", deliveryId: "d-1", prompt: "p", reply: "r" });
    await resources.closeJournals();
    expect(JSON.stringify(warnings)).toContain("EROFS");
    expect(JSON.stringify(warnings)).not.toContain("ENOENT");
  });
});
