import { chmodSync, mkdirSync, readFileSync } from "node:fs";
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

/** The WARN lines of the gateway's log. */
function warnings(dir: string): string[] {
  return readFileSync(join(dir, "logs", "gateway.log"), "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((line) => line.level === 40)
    .map((line) => line.msg);
}

describe("gateway start: secret files readable by other users, a profile's .env", { timeout: 15_000 }, () => {
  it("logs a WARN naming each file, its mode and chmod 600", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s3cret" } })));
    const env = home.write(".env", "PR_SECRET=s3cret\n");
    const workEnv = home.write("profiles/work/.env", "NOTES_TOKEN=t\n");
    chmodSync(env, 0o644);
    chmodSync(workEnv, 0o640);
    gateway = await startGatewayInHome(home);
    expect(warnings(home.dir)).toContain(
      `[gateway] ${env} holds secrets but is readable by other users (mode 0644) — chmod 600 ${env}`,
    );
    expect(warnings(home.dir)).toContain(
      `[gateway] ${workEnv} holds secrets but is readable by other users (mode 0640) — chmod 600 ${workEnv}`,
    );
  });

  it("logs a WARN for a line of a named profile's .env that sets nothing, and for a profile's own config.yaml", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s3cret" } })));
    const workEnv = home.write("profiles/work/.env", "export NOTES_TOKEN work-token\n", 0o600);
    const own = home.write("profiles/work/config.yaml", "platforms: {}\n");
    gateway = await startGatewayInHome(home);
    // A config.yaml of the profile's own is never read.
    expect(warnings(home.dir)).toContain(
      `[gateway] ${own} is not read: one ${home.dir}/config.yaml serves every profile — move its routes there, bound with profile: work`,
    );
    expect(warnings(home.dir)).toContain(
      `[gateway] ${workEnv}: line 1: not a NAME=value line — write NOTES_TOKEN=<value>, or start the line with # to keep it as a comment (profile work's MCP connections read this file)`,
    );
    expect(warnings(home.dir).join("\n")).not.toContain("work-token");
  });

  it("logs a WARN for a named profile's .env that cannot be read (a directory), as svc config check names it", async () => {
    home = tempHome();
    home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s3cret" } })));
    const workEnv = join(home.dir, "profiles/work/.env");
    mkdirSync(workEnv, { recursive: true });
    gateway = await startGatewayInHome(home);
    expect(warnings(home.dir)).toContain(
      `[gateway] ${workEnv}: cannot be read (EISDIR: illegal operation on a directory, read) — it is a directory: move it away and write the file in its place (profile work's MCP connections read this file)`,
    );
  });

  it("a reload that reads a config.yaml now holding a credential and readable by others logs the same WARN", async () => {
    home = tempHome();
    const file = home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "${PR_SECRET}" } })));
    home.write(".env", "PR_SECRET=s3cret\n", 0o600);
    gateway = await startGatewayInHome(home);
    const warning = `[gateway] ${file} holds secrets (platforms.webhook.routes.pr.secret) but is readable by other users (mode 0644) — chmod 600 ${file}, or keep them in .env and write \${NAME} in their place`;
    // Edited while the gateway runs: the secret written out, the file left 0644 as an editor creates it.
    home.write("config.yaml", stringify(webhookConfig({ pr: { secret: "s3cret" } })));
    chmodSync(file, 0o644);
    expect(warnings(home.dir)).not.toContain(warning);
    gateway.reload();
    expect(warnings(home.dir)).toContain(warning);
  });
});
