import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Gateway } from "../../../src/gateway/index.js";
import { startGatewayInHome, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

/**
 * A secret file every user of the machine can read (a `.env` created by hand, a token file restored from
 * a backup) was named only by `svc config check`: a gateway started without it said nothing. The start
 * now logs the same warning, with the command that fixes it.
 */

let home: TempHome | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  home?.cleanup();
  home = undefined;
});

describe("gateway start: secret files readable by other users", { timeout: 15_000 }, () => {
  it("logs a WARN naming each file, its mode and chmod 600", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s3cret" } })));
    const env = home.write(".env", "PR_SECRET=s3cret\n");
    const workEnv = home.write("profiles/work/.env", "NOTES_TOKEN=t\n");
    chmodSync(env, 0o644);
    chmodSync(workEnv, 0o640);
    gateway = await startGatewayInHome(home);
    const warnings = readFileSync(join(home.dir, "logs", "gateway.log"), "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((line) => line.level === 40)
      .map((line) => line.msg);
    expect(warnings).toContain(
      `[gateway] ${env} holds secrets but is readable by other users (mode 0644) — chmod 600 ${env}`,
    );
    expect(warnings).toContain(
      `[gateway] ${workEnv} holds secrets but is readable by other users (mode 0640) — chmod 600 ${workEnv}`,
    );
  });
});
