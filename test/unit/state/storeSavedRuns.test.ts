import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pipelineLogHooks } from "../../../src/gateway/logHooks.js";
import { storeSavedRuns } from "../../../src/gateway/resumeSavedRuns.js";
import { readPendingRuns, writePendingRuns } from "../../../src/io/stores/pendingRuns.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { tempHome } from "../../helpers/home.js";
import { pendingRun } from "../../helpers/pendingRun.js";

const run = (id: string) => pendingRun(id);
const ids = (file: string) => readPendingRuns(file).runs.map((r) => r.deliveryId);

describe("webhook-pending-runs.json read by a gateway with state.backend: redis", () => {
  it("each run leaves the file only once the shared queue stored it; one it could not store stays for the next start", async () => {
    const home = tempHome();
    try {
      const file = join(home.dir, "webhook-pending-runs.json");
      writePendingRuns(file, { runs: [run("a"), run("b"), run("c")], unreadable: [] });
      const inFileWhenStored: string[][] = [];
      const log = captureLogger();
      await storeSavedRuns(
        file,
        async (r) => {
          // A SIGKILL now must lose nothing: the run is still in the file while it is being stored.
          inFileWhenStored.push(ids(file));
          if (r.deliveryId === "b") throw new Error("Redis is unreachable");
        },
        () => ({ profile: "default", route: {} }) as never,
        pipelineLogHooks(log.logger),
      );
      expect(inFileWhenStored).toEqual([
        ["a", "b", "c"],
        ["a", "b", "c"],
        ["a", "b", "c"],
      ]);
      expect(ids(file)).toEqual(["b"]);
      expect(log.messages()).toEqual([
        `[webhook] 2 agent run(s) left unfinished at the last shutdown queued again (from ${file})`,
      ]);
    } finally {
      home.cleanup();
    }
  });
});
