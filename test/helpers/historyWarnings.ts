import { historyNotWritten } from "../../src/gateway/historyNotWritten.js";
import { ROTATION_CHECK_MS } from "../../src/io/batchedWriter.js";
import type { Logger } from "../../src/io/log.js";
import { createHistoryWriter, historyDir } from "../../src/io/stores/deliveryHistory.js";

/**
 * The delivery history's writer in `home` as the gateway runs it: one request (d-1) written, then `change` done to
 * the history directory `dir` while it runs, then two more requests a rotation check later, and the writer closed.
 * What it warned, and what `change` returned.
 */
export function historyWarnings<T>(
  home: string,
  change: (dir: string) => T,
): { warnings: unknown[][]; changed: T } {
  const warnings: unknown[][] = [];
  const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
  let now = Date.parse("2026-11-20T10:00:00Z");
  const dir = historyDir(home);
  const writer = createHistoryWriter(dir, historyNotWritten(logger, dir), () => now);
  const request = (id: string) => ({
    kind: "request" as const,
    id,
    at: new Date(now).toISOString(),
    route: "pr",
    status: 202,
    outcome: "accepted",
  });
  writer.record(request("d-1"));
  writer.flush();
  const changed = change(dir);
  now += ROTATION_CHECK_MS;
  for (const id of ["d-2", "d-3"]) {
    writer.record(request(id));
    writer.flush();
  }
  writer.close();
  return { warnings, changed };
}
