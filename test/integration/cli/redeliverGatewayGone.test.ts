import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { deliverSigned } from "../../helpers/http.js";
import { signalProcess } from "../../helpers/process.js";
import { svc } from "./svc.js";

const SECRET = "gateway-gone-secret-5521";
const homes: TempHome[] = [];
const children: ChildProcess[] = [];
const fakes: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const fake of fakes.splice(0)) await fake.close();
  for (const home of homes.splice(0)) home.cleanup();
});

/**
 * A gateway that took the redelivery and ended before answering (killed, crashed while delivering) was
 * reported as unreachable — `cannot reach the gateway … start it with svc gateway start` — though it had the
 * request and may have delivered it: read so, the user sends it again and the chat gets it twice.
 */
describe("svc webhook redeliver to a gateway that ends while handling the request", {
  timeout: 60_000,
}, () => {
  it("says the gateway took the request and closed the connection unanswered, not that it could not be reached", async () => {
    const telegram = await startFakeTelegram();
    fakes.push(telegram);
    const home = tempHome();
    homes.push(home);
    home.write(
      "config.yaml",
      stringify(
        webhookConfig(
          {
            notes: {
              secret: SECRET,
              deliver: "telegram",
              deliver_only: true,
              deliver_extra: { chat_id: "4242" },
              prompt: "PR {number}",
            },
          },
          { port: 0 },
          { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
        ),
      ),
      0o600,
    );
    const gateway = await startCliGateway(home, children);
    expect(await deliverSigned(gateway.port, "notes", "gone-1", SECRET)).toMatchObject({ status: 200 });
    // The first delivery's message is sent first: the held answer below is the redelivery's, not its.
    await vi.waitFor(() => expect(sentTexts(telegram)).toHaveLength(1), { timeout: 15_000 });
    // Its request's record (what redeliver sends again) is written after the message went out: waited for.
    await vi.waitFor(() => expect(historyHeads(home.dir)).toContain('{"kind":"request","id":"gone-1"'), {
      timeout: 15_000,
    });
    // The redelivery's message reaches the platform, which holds its answer: the gateway is killed meanwhile.
    telegram.enqueue({ delayMs: 30_000, json: { ok: true, result: { message_id: 9 } } });
    const sent = telegram.requests.length;
    const redelivery = svc(home, ["webhook", "redeliver", "gone-1", "--port", String(gateway.port)]);
    // A redelivery that ended before it reached the platform says why in the failure (a slow machine: 30 s).
    let ended: { code: number | null; stdout: string; stderr: string } | undefined;
    void redelivery.then((r) => {
      ended = r;
    });
    await vi.waitFor(
      () => {
        if (telegram.requests.length > sent) return;
        throw new Error(
          ended === undefined
            ? "the redelivery has not reached the platform yet"
            : `svc webhook redeliver ended (${ended.code}) before reaching the platform: ${ended.stderr}${ended.stdout}\n${historyHeads(home.dir)}`,
        );
      },
      { timeout: 30_000, interval: 50 },
    );
    signalProcess(gateway.child.pid ?? 0, "SIGKILL");
    const result = await redelivery;
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain("cannot reach");
    expect(result.stderr).toContain(
      `svc: the gateway at http://127.0.0.1:${gateway.port}/webhooks/notes took the request, then closed the connection without an answer (socket hang up) — it may have stopped or crashed while handling it, and the request may have been handled: svc webhook deliveries notes shows whether it was, svc gateway status whether the gateway runs, and the gateway log says why`,
    );
  });
});

/** What the gateway had recorded when a redelivery found no delivery: each history file's line heads. */
function historyHeads(home: string): string {
  const dir = join(home, "deliveries");
  if (!existsSync(dir)) return `${dir} does not exist`;
  return readdirSync(dir)
    .map((file) => {
      const lines = readFileSync(join(dir, file), "utf8").split("\n");
      return `${file}: ${lines.map((line) => line.slice(0, 120)).join("\n  ")}`;
    })
    .join("\n");
}
