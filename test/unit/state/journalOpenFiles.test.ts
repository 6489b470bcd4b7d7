import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { CLI_NODE_ARGS, svcModule } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const module = (path: string) => JSON.stringify(pathToFileURL(svcModule(path)).href);

let home: TempHome;
afterEach(() => home?.cleanup());

/**
 * The state journal's rotation (a new segment) in a gateway at its limit on open files: its log line said
 * `… failed; … — check the disk has room` with the cause `EMFILE: too many open files, open …`, sending the
 * operator to the disk, which had room.
 */
describe("a journal rotation at the limit on open files", () => {
  it("is logged naming the limit and how to raise it, not the disk", async () => {
    home = tempHome();
    const script = `
      import { openSync, closeSync } from "node:fs";
      import { LocalStateStore } from ${module("state/localStore.js")};
      import { journalErrorLine } from ${module("state/gatewayState.js")};
      const dir = ${JSON.stringify(`${home.dir}/state`)};
      const lines = [];
      const store = new LocalStateStore({ dir, now: () => 0, maxSegmentBytes: 4096,
        onError: (err) => lines.push(journalErrorLine(dir, err)) });
      store.recover();
      const held = [];
      try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
      for (let n = 0; n < 200 && lines.length === 0; n++) {
        store.remember("k" + n + "-".repeat(60), 0);
        await store.durable();
        await new Promise((done) => setTimeout(done, 1));
      }
      for (const fd of held) closeSync(fd);
      console.log(JSON.stringify(lines));
      await store.close();`;
    const node = [process.execPath, ...CLI_NODE_ARGS, "--input-type=module", "-e", script];
    const { stdout } = await execa("bash", ["-c", 'ulimit -n 256 && exec "$@"', "bash", ...node], {
      cwd: resolve(import.meta.dirname, "../../.."),
    });
    const lines = JSON.parse(stdout) as Array<{ cause: string; message: string }>;
    expect(lines[0]?.cause).toMatch(/EMFILE/);
    expect(lines[0]?.message).toBe(
      `[state] rotating the journal in ${home.dir}/state failed; the current segment keeps every record and the rotation is tried again once it grew by another quarter — the gateway has as many files open as its limit allows, not a problem of the disk: raise its open-file limit (ulimit -n; LimitNOFILE= in a systemd unit, docker run --ulimit nofile=...)`,
    );
  }, 30_000);
});
