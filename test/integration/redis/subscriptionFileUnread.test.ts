import { randomUUID } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { redisPerFile } from "../../helpers/redisPerFile.js";
import { svc } from "../cli/svc.js";

/**
 * A home switched from `state.backend: local` to `redis` keeps its webhook_subscriptions.json, which redis
 * does not read: its subscriptions were dropped without a word (svc config check "0 subscriptions", svc
 * webhook list "No dynamic subscriptions", the gateway "loaded 0 dynamic subscription(s)", senders 404).
 * The start, each reload, svc config check and svc webhook list now warn, naming those Redis does not hold.
 */

const shared = redisPerFile();

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

const NAMES = ["s1", "s2", "s3", "s4", "s5", "s6", "s7"];

const writeConfig = (made: TempHome, state: Record<string, unknown>) =>
  made.write("config.yaml", stringify(webhookConfig({}, {}, { state })), 0o600);

/** The WARN lines of the home's log about webhook_subscriptions.json not being read. */
const unreadLines = (made: TempHome) =>
  readFileSync(join(made.dir, "logs", "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line.includes("that file is not read"))
    .map((line) => JSON.parse(line) as { msg: string; level: number });

it("the subscriptions webhook_subscriptions.json holds that Redis does not are named by the start, a reload, config check and webhook list", {
  timeout: 60_000,
}, async () => {
  const made = tempHome();
  home = made;
  writeConfig(made, { backend: "local" });
  for (const name of NAMES)
    expect(
      (await svc(made, ["webhook", "subscribe", name, "--secret", `secret-${name}-0123456789`])).code,
    ).toBe(0);
  const file = join(made.dir, "webhook_subscriptions.json");
  const prefix = `unread${randomUUID()}`;
  writeConfig(made, { backend: "redis", redis_url: shared.server.url, redis_key_prefix: prefix });
  const where = `${prefix}:subscriptions in Redis at ${shared.server.url}`;
  const warning = `${file} holds 7 subscriptions that ${where} does not (s1, s2, s3, s4, s5 and 2 more): with state.backend: redis that file is not read, so they are served by no gateway (404) — recreate each with svc webhook subscribe <name> (its settings and secret are in the file), then remove them from the file; or set state.backend: local to serve the file again`;

  const checked = await svc(made, ["config", "check"]);
  expect(checked.code).toBe(0);
  expect(checked.stderr).toContain(`Warning: ${warning}\n`);
  const listed = await svc(made, ["webhook", "list"]);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain("No dynamic subscriptions");
  expect(listed.stderr).toBe(`Warning: ${warning}\n`);

  gateway = await startGatewayInHome(made);
  expect(unreadLines(made)).toEqual([{ ...unreadLines(made)[0], level: 40, msg: `[webhook] ${warning}` }]);

  // One recreated in Redis: the others are still named, by the next reload too.
  expect((await svc(made, ["webhook", "subscribe", "s3", "--secret", "secret-s3-0123456789"])).code).toBe(0);
  gateway.reload();
  await vi.waitFor(() => expect(unreadLines(made)).toHaveLength(2), { timeout: 10_000, interval: 50 });
  expect(unreadLines(made)[1]?.msg).toContain(
    `holds 6 subscriptions that ${where} does not (s1, s2, s4, s5, s6 and 1 more)`,
  );
  const listedAgain = await svc(made, ["webhook", "list"]);
  expect(listedAgain.stdout).toMatch(/^s3\s/m);
  expect(listedAgain.stderr).toContain("(s1, s2, s4, s5, s6 and 1 more)");

  // Once the file is gone (its subscriptions recreated, or not wanted), nothing is said.
  rmSync(file);
  const quiet = await svc(made, ["config", "check"]);
  expect(quiet.stderr).not.toContain("that file is not read");
  expect((await svc(made, ["webhook", "list"])).stderr).toBe("");
});

it("with state.backend: local the file is the store: nothing is said", { timeout: 30_000 }, async () => {
  const made = tempHome();
  home = made;
  writeConfig(made, { backend: "local" });
  expect((await svc(made, ["webhook", "subscribe", "s1", "--secret", "secret-s1-0123456789"])).code).toBe(0);
  expect((await svc(made, ["webhook", "list"])).stderr).toBe("");
  expect((await svc(made, ["config", "check"])).stderr).not.toContain("that file is not read");
});
