import { mkdirSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { historyNotWritten } from "../../../src/gateway/historyNotWritten.js";
import { ROTATION_CHECK_MS } from "../../../src/io/batchedWriter.js";
import type { Logger } from "../../../src/io/log.js";
import { createHistoryWriter, historyDir } from "../../../src/io/stores/deliveryHistory.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const T0 = Date.parse("2026-11-20T10:00:00Z");
const request = (id: string) => ({
  kind: "request" as const,
  id,
  at: new Date(T0).toISOString(),
  route: "pr",
  status: 202,
  outcome: "accepted",
});

/** Seen: `[webhook] delivery history not written {"err":"EISDIR: illegal operation on a directory, open …"}`. */
describe("a directory in history.jsonl's place while the gateway runs", () => {
  it("is logged naming it and what to do, once, not as a bare EISDIR", () => {
    home = tempHome();
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    let now = T0;
    const dir = historyDir(home.dir);
    const writer = createHistoryWriter(dir, historyNotWritten(logger, dir), () => now);
    writer.record(request("d-1"));
    writer.flush();
    const file = join(dir, "history.jsonl");
    renameSync(file, join(home.dir, "aside.jsonl"));
    mkdirSync(file);
    now += ROTATION_CHECK_MS;
    for (const id of ["d-2", "d-3"]) {
      writer.record(request(id));
      writer.flush();
    }
    writer.close();
    expect(warnings).toEqual([
      [
        `[webhook] delivery history not written: ${file}: it is a directory: move it away (the gateway writes its history file there); said once until a write succeeds again`,
      ],
    ]);
    expect(readFileSync(join(home.dir, "aside.jsonl"), "utf8")).toContain('"d-1"');
  });
});

/** Seen: `[webhook] delivery history not written {"err":"EEXIST: file already exists, mkdir '…/deliveries'"}`. */
describe("a link to a device in the history directory's place while the gateway runs", () => {
  it("is logged naming the link and what to do, once, not as a bare EEXIST", () => {
    home = tempHome();
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as Logger;
    let now = T0;
    const dir = historyDir(home.dir);
    const writer = createHistoryWriter(dir, historyNotWritten(logger, dir), () => now);
    writer.record(request("d-1"));
    writer.flush();
    rmSync(dir, { recursive: true });
    symlinkSync("/dev/null", dir);
    now += ROTATION_CHECK_MS;
    for (const id of ["d-2", "d-3"]) {
      writer.record(request(id));
      writer.flush();
    }
    writer.close();
    expect(warnings).toEqual([
      [
        `[webhook] delivery history not written: ${dir} is a symbolic link to /dev/null, which is a device, not a directory — point the link at a directory, or remove the link (the gateway makes the directory); said once until a write succeeds again`,
      ],
    ]);
  });
});
