import { execFileSync } from "node:child_process";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it } from "vitest";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

/**
 * `.env` is read as a shell reads it: in a "double-quoted" value, `\"` is a quote and `\\` one backslash
 * (python-dotenv and docker compose read them so too). A secret written so must key the HMAC with the text
 * the shell gives, or every request signed with it is 401. The expected secret is what bash itself reads
 * from the same file.
 */

/** What bash gives NAME after sourcing `file`. */
function bashReads(file: string, name: string): string {
  return execFileSync("bash", ["-c", `set -a; . "$1"; printf '%s' "\${${name}}"`, "bash", file], {
    encoding: "utf8",
  });
}

const DOTENV = [
  'WEBHOOK_SECRET="glob\\"al\\\\secret"',
  'GH_SECRET="p@ss\\"wo\\\\rd\\\\"',
  'PLAIN="no-escapes-here"',
  "",
].join("\n");

describe('.env: \\" and \\\\ in a double-quoted secret read as the shell reads them', () => {
  const gateways = gatewayPerTest();
  const homes: Array<{ cleanup(): void }> = [];
  afterEach(() => {
    for (const home of homes.splice(0)) home.cleanup();
  });

  it("the route secret ${GH_SECRET} and WEBHOOK_SECRET verify signatures made with the shell's reading", async () => {
    // The shell's reading of the file, from a copy outside the gateway's home.
    const probe = tempHome();
    homes.push(probe);
    const file = probe.write("probe.env", DOTENV);
    const routeSecret = bashReads(file, "GH_SECRET");
    const globalSecret = bashReads(file, "WEBHOOK_SECRET");
    expect(routeSecret).toBe('p@ss"wo\\rd\\');
    expect(globalSecret).toBe('glob"al\\secret');

    const gw = await gateways.start({
      config: webhookConfig({ own: { secret: "${GH_SECRET}" }, global: {} }),
      files: { ".env": DOTENV },
    });
    const body = '{"ref":"refs/heads/main"}';
    const post = async (route: string, key: string) =>
      (
        await postJson(gw.url(`/webhooks/${route}`), body, {
          "X-Hub-Signature-256": await signGithub(key, body),
        })
      ).status;
    expect(await post("own", routeSecret)).toBe(202);
    expect(await post("global", globalSecret)).toBe(202);
    // The text as written (backslashes kept) is not the secret.
    expect(await post("own", 'p@ss\\"wo\\\\rd\\\\')).toBe(401);
  });
});
