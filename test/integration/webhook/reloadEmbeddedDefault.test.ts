import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Gateway } from "../../../src/gateway/index.js";
import { startGatewayInHome } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  home?.cleanup();
  gateway = undefined;
  home = undefined;
});

describe("SIGHUP reload of a gateway started without config.yaml", () => {
  it("says it reloaded the embedded default, not a config.yaml that does not exist", async () => {
    home = tempHome();
    gateway = await startGatewayInHome(home);
    gateway.reload();
    const reloaded = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line.includes("[webhook] Reloaded"))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(reloaded).toEqual([
      `[webhook] Reloaded the embedded default (no ${join(home.dir, "config.yaml")}) — routes: (none)`,
    ]);
  });
});
