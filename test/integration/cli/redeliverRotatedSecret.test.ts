import type { ChildProcess } from "node:child_process";
import { readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { historyOfIds } from "../../../src/io/stores/deliveryHistory.js";
import { startFakeTelegram } from "../../fakes/telegram.js";
import { startCliGateway } from "../../helpers/cliGateway.js";
import { webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { deliverSigned } from "../../helpers/http.js";
import { svc } from "./svc.js";

const OLD = "rotated-out-secret-7731";
const NEW = "rotated-in-secret-9912";
const SUB = "subscription-secret-4471";
let home: TempHome;
const children: ChildProcess[] = [];
const fakes: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const fake of fakes.splice(0)) await fake.close();
  home.cleanup();
});

let telegramUrl = "";
/** config.yaml with the static route pr of `secret`, or none (undefined). */
const config = (secret: string | undefined) =>
  stringify(
    webhookConfig(
      secret === undefined
        ? {}
        : {
            pr: {
              secret,
              deliver: "telegram",
              deliver_only: true,
              deliver_extra: { chat_id: "4242" },
              prompt: "PR {number}",
            },
          },
      { port: 0 },
      { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegramUrl } } },
    ),
  );

/**
 * A redelivery is signed with the route's secret as the command reads it now, never with the original's
 * signature (docs/cli.md). After a rotation in config.yaml that the running gateway has not reloaded, the
 * gateway refuses it 401 `Invalid signature`, and the command printed only that: no word of why nor what to
 * do. It must name the secret it signed with and the reload that makes the gateway take it. Once reloaded, a
 * delivery the sender signed with the rotated-out secret is redelivered, signed with the new one, and taken.
 */
it("a 401 redelivery says to reload the gateway after a rotation; once reloaded, a delivery signed with the rotated-out secret is redelivered", {
  timeout: 60_000,
}, async () => {
  const telegram = await startFakeTelegram();
  fakes.push(telegram);
  telegramUrl = telegram.url;
  home = tempHome();
  home.write("config.yaml", config(OLD), 0o600);
  const gateway = await startCliGateway(home, children);
  expect(await deliverSigned(gateway.port, "pr", "rot-1", OLD)).toMatchObject({ status: 200 });
  const dir = join(home.dir, "deliveries");
  // The request's record (what redeliver sends again) is written after the message went out: waited for.
  await vi.waitFor(() =>
    expect(historyOfIds(dir, (id) => id === "rot-1").map((r) => r.kind)).toContain("request"),
  );

  // Rotated in the file, the gateway not told.
  home.write("config.yaml", config(NEW), 0o600);
  const refused = await svc(home, ["webhook", "redeliver", "rot-1"]);
  expect(refused.code).toBe(1);
  expect(refused.stdout).toContain("401");
  expect(refused.stderr).toContain(
    `the running gateway (pid ${gateway.child.pid}) refused the redelivery's signature (401): it was signed with platforms.webhook.routes.pr.secret as ${join(home.dir, "config.yaml")} has it now`,
  );
  expect(refused.stderr).toContain(`kill -HUP ${gateway.child.pid}`);
  expect(refused.stderr).toContain("then run svc webhook redeliver rot-1 again");
  expect(refused.stderr).not.toContain(NEW);
  expect(refused.stderr).not.toContain(OLD);
  // The gateway's pid of another PID namespace (a container and its host sharing SVC_HOME; its record
  // rewritten so): asked at /health, it runs, and the reload is said to be run where it was started.
  const stateFile = join(home.dir, "gateway.json");
  const recorded = readFileSync(stateFile, "utf8");
  writeFileSync(stateFile, JSON.stringify({ ...JSON.parse(recorded), pid_namespace: "pid:[4026530000]" }));
  const elsewhere = await svc(home, ["webhook", "redeliver", "rot-1"]);
  writeFileSync(stateFile, recorded);
  expect(elsewhere.code).toBe(1);
  expect(elsewhere.stderr).toContain(
    `the running gateway (pid ${gateway.child.pid}) refused the redelivery's signature (401)`,
  );
  expect(elsewhere.stderr).toContain(
    `reload it (kill -HUP ${gateway.child.pid} where it was started, in its PID namespace pid:[4026530000] (this command runs in ${readlinkSync("/proc/self/ns/pid")}): docker exec <container> kill -HUP ${gateway.child.pid}, or on the host)`,
  );

  gateway.child.kill("SIGHUP");
  let probe = 0;
  await vi.waitFor(
    async () =>
      expect(await deliverSigned(gateway.port, "pr", `probe-${probe++}`, NEW)).toMatchObject({ status: 200 }),
    { timeout: 15_000, interval: 100 },
  );
  // The sender's own retry with the rotated-out secret is refused; the redelivery, signed anew, is taken.
  expect(await deliverSigned(gateway.port, "pr", "rot-1", OLD)).toMatchObject({ status: 401 });
  const again = await svc(home, ["webhook", "redeliver", "rot-1"]);
  expect(again).toMatchObject({ code: 0, stderr: "" });
  expect(again.stdout).toMatch(/200 OK/);
  const newId = /as (redelivery-[0-9a-f]{8}-rot-1)\)/.exec(again.stdout)?.[1] as string;
  // The direct delivery is recorded just before its answer's request record.
  await vi.waitFor(() =>
    expect(historyOfIds(dir, (id) => id === newId).find((r) => r.kind === "request")).toMatchObject({
      status: 200,
      outcome: "delivered",
      redelivery_of: "rot-1",
    }),
  );

  // A subscription's secret is read at each request, so a reload is no advice for a rotated one; here the
  // route moved from config.yaml to a subscription of its name, the gateway not told: the static route it
  // still has wins, and checks its own secret.
  expect(await deliverSigned(gateway.port, "pr", "sub-1", NEW)).toMatchObject({ status: 200 });
  await vi.waitFor(() =>
    expect(historyOfIds(dir, (id) => id === "sub-1").map((r) => r.kind)).toContain("request"),
  );
  home.write("config.yaml", config(undefined), 0o600);
  const subscribed = await svc(home, [
    "webhook",
    "subscribe",
    "pr",
    "--secret",
    SUB,
    "--deliver",
    "telegram",
    "--deliver-only",
    "--deliver-chat-id",
    "4242",
  ]);
  expect(subscribed.code).toBe(0);
  const shadowed = await svc(home, ["webhook", "redeliver", "sub-1"]);
  expect(shadowed.code).toBe(1);
  expect(shadowed.stderr).toContain(
    `it was signed with subscription pr's secret as its store has it now (svc webhook list), and the gateway checks another secret`,
  );
  expect(shadowed.stderr).toContain(
    "reads a subscription's secret from its store at each request, so a changed secret needs no reload",
  );
  expect(shadowed.stderr).toContain(
    `a static route pr that ${join(home.dir, "config.yaml")} had when the gateway last loaded it wins over the subscription (reload it: kill -HUP ${gateway.child.pid})`,
  );
  expect(shadowed.stderr).not.toContain("has not loaded it yet");
  expect(shadowed.stderr).not.toContain(SUB);
  // Reloaded, the gateway serves the subscription: the redelivery is taken.
  gateway.child.kill("SIGHUP");
  await vi.waitFor(
    async () =>
      expect(await deliverSigned(gateway.port, "pr", `probe-${probe++}`, SUB)).toMatchObject({ status: 200 }),
    { timeout: 15_000, interval: 100 },
  );
  const served = await svc(home, ["webhook", "redeliver", "sub-1"]);
  expect(served).toMatchObject({ code: 0, stderr: "" });
});
