import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A gateway started on the embedded default (127.0.0.1), then given a config.yaml that sets no host, as a
 * new user writes one beside it: the reload said only `platforms.webhook.host changed: this takes effect
 * after a restart`, of a key the file does not write, and the restart then listened on every interface.
 */
let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
});

const warnings = (dir: string) =>
  readFileSync(join(dir, "logs", "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === 40)
    .map((line) => line.msg);

describe("a reload that moves the listener onto every interface at the next restart", {
  timeout: 30_000,
}, () => {
  it("says so at the reload, naming the default that does it and the fix", async () => {
    home = tempHome();
    gateway = await startGatewayInHome(home);
    const routes = { gh: { secret: "reload-every-interface-secret" } };
    home.write("config.yaml", stringify({ platforms: { webhook: { enabled: true, routes } } }), 0o600);
    gateway.reload();
    expect(warnings(home.dir)).toContain(
      `[webhook] after a restart the gateway listens on every network interface (0.0.0.0:${gateway.port}; it listens on 127.0.0.1 until then): platforms.webhook.host is 0.0.0.0, which is also its default in a config.yaml that sets none — anyone who can reach this machine could then post to its routes: set platforms.webhook.host: 127.0.0.1 to keep accepting senders on this machine only, or keep it and make sure every route has a secret`,
    );
    // A file that keeps the listener on loopback says nothing of it.
    home.write(
      "config.yaml",
      stringify({ platforms: { webhook: { enabled: true, host: "127.0.0.1", routes } } }),
      0o600,
    );
    const before = warnings(home.dir).length;
    gateway.reload();
    expect(
      warnings(home.dir)
        .slice(before)
        .some((w) => w.includes("every network interface")),
    ).toBe(false);
  });
});
