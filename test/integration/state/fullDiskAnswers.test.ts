import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisks } from "../../helpers/smallDisk.js";

const children: ChildProcess[] = [];
afterEach(async () => {
  // The gateway's files on the disk must be closed before it can be unmounted.
  await Promise.all(
    children.splice(0).map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once("exit", () => done());
          child.kill("SIGKILL");
        }),
    ),
  );
  unmountSmallDisks();
});

/**
 * docs/durability.md, a real full disk (a tmpfs of 2 MiB holding SVC_HOME, filled up): the journal's write
 * fails with ENOSPC, and no event whose record was not kept is answered 202. The other tests of this fail the
 * journal's writes through its file-system facade; this one lets the kernel refuse them.
 */
describe.skipIf(!CAN_MOUNT)("svc gateway run on a disk that fills up", () => {
  it("answers 503 with Retry-After, never 202, once the journal cannot be written; 202 again once there is room", async () => {
    const disk = mountSmallDisk("svc-full-", "size=2m,mode=0700");
    writeFileSync(
      join(disk.dir, "config.yaml"),
      stringify(
        webhookConfig({ pr: { secret: "INSECURE_NO_AUTH", prompt: "{text}" } }, { rate_limit: 100_000 }),
      ),
    );
    const home = { dir: disk.dir, write: () => "", cleanup: () => {} };
    const gateway = await startCliGateway(home, children);
    const url = `http://127.0.0.1:${gateway.port}/webhooks/pr`;
    // ~64 KB per record: the space the journal's segment was grown into ahead of its records (a step, 1 MiB)
    // takes at most ~16 of them once the disk is full.
    const send = (id: string) =>
      postJson(url, { text: `${"x".repeat(64_000)} ${id}` }, { "X-Request-ID": id });
    expect((await send("before")).status).toBe(202);
    disk.fill();
    // What the grown space (and the journal's last page) still takes is kept, and answered 202.
    const answers: number[] = [];
    let refused: Awaited<ReturnType<typeof send>> | undefined;
    for (let n = 0; n < 40 && refused === undefined; n++) {
      const answer = await send(`full-${n}`);
      answers.push(answer.status);
      if (answer.status !== 202) refused = answer;
    }
    expect(answers.slice(0, -1).every((status) => status === 202)).toBe(true);
    expect(refused?.status, `answers: ${answers.join(" ")}\n${gateway.output()}`).toBe(503);
    expect(refused?.body).toEqual({ error: "Could not record the event, retry later" });
    expect(refused?.headers.get("retry-after")).toBe("30");
    expect((await send("refused-again")).status).toBe(503);
    disk.empty();
    expect((await send("refused-again")).status).toBe(202);
  }, 30_000);
});
