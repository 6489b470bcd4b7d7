import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { postJson, request } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { svc } from "../cli/svc.js";

/**
 * webhook_subscriptions.json is re-read when it changes, on the request path. A named pipe put in its place
 * (mkfifo, or a secret tool that serves files through one) was read as a file: the read waited for a
 * writer, and the whole gateway stopped answering, /health included, until one came. It is refused as not
 * a regular file instead: the last good set stays served, one ERROR line says why, and the commands that
 * read the store say so and exit instead of waiting.
 */

let gw: TestGateway | undefined;
const writers: ChildProcess[] = [];
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  for (const writer of writers.splice(0)) if (writer.pid !== undefined) signalProcess(writer.pid, "SIGKILL");
});

/**
 * A writer that feeds the pipe until the test ends, so a read that waits on it (the old behaviour) gets the
 * record `pipe` instead of blocking the test for ever.
 */
function feed(fifo: string): void {
  const record = JSON.stringify({ pipe: { secret: "INSECURE_NO_AUTH" } });
  const child = spawn(
    "sh",
    ["-c", `trap '' PIPE; while :; do printf '%s' '${record}' > '${fifo}'; sleep 0.2; done`],
    {
      stdio: "ignore",
    },
  );
  writers.push(child);
}

describe("a named pipe in place of the subscription store", { timeout: 60_000 }, () => {
  it("is never read: the gateway keeps answering and serving the last good set; the commands refuse it", async () => {
    gw = await startTestGateway({
      config: webhookConfig({ fixed: { secret: "INSECURE_NO_AUTH" } }),
      files: { "webhook_subscriptions.json": JSON.stringify({ dyn: { secret: "INSECURE_NO_AUTH" } }) },
    });
    const live = gw;
    const store = join(live.home.dir, "webhook_subscriptions.json");
    expect((await postJson(live.url("/webhooks/dyn"), {})).status).toBe(202);

    rmSync(store);
    execFileSync("mkfifo", ["-m", "600", store]);
    feed(store);
    expect((await postJson(live.url("/webhooks/pipe"), {})).status).toBe(404);
    expect((await postJson(live.url("/webhooks/dyn"), {})).status).toBe(202);
    expect((await request(live.url("/health"))).status).toBe(200);
    await vi.waitFor(() =>
      expect(
        live
          .logs()
          .filter((l) => l.level === 50 && l.msg.includes(`${store}: is not a regular file (a named pipe)`)),
      ).toHaveLength(1),
    );

    for (const args of [
      ["webhook", "list"],
      ["webhook", "subscribe", "more"],
    ]) {
      const result = await svc(live.home, args);
      expect(result.code, args.join(" ")).not.toBe(0);
      expect(result.stderr).toContain(`${store}: is not a regular file (a named pipe)`);
    }

    rmSync(store);
    writeFileSync(store, JSON.stringify({ back: { secret: "INSECURE_NO_AUTH" } }), { mode: 0o600 });
    expect((await postJson(live.url("/webhooks/back"), {})).status).toBe(202);
  });
});
