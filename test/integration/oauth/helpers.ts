import { makeJob, type OAuthJob } from "../../../src/actors/oauth/context.js";
import { runLogin } from "../../../src/actors/oauth/runLogin.js";
import { type GatewaySystem, startSystem } from "../../../src/actors/system.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import type { OAuthSettings } from "../../../src/io/oauth/settings.js";
import type { StoredTokens } from "../../../src/io/oauth/tokenStore.js";
import { followAuthorization } from "../../fakes/authServer/browserDriver.js";

export interface JobHarness {
  readonly job: OAuthJob;
  readonly printed: string[];
  readonly opened: string[];
}

/** A login job on a temp SVC_HOME whose "browser" follows the authorization redirects over HTTP. */
export function harness(
  home: string,
  serverName: string,
  url: string,
  oauth: OAuthSettings = {},
  extra: Partial<OAuthJob> = {},
): JobHarness {
  const printed: string[] = [];
  const opened: string[] = [];
  const job = makeJob(
    serverName,
    { url, auth: "oauth", oauth },
    {
      paths: svcPaths(home),
      logger: silentLogger(),
      print: (line) => printed.push(line),
      openBrowser: async (u) => {
        opened.push(u);
        await followAuthorization(u);
      },
    },
  );
  return { job: { ...job, ...extra }, printed, opened };
}

export function testSystem(): GatewaySystem {
  return startSystem({ logger: silentLogger() });
}

/** Runs one login under a fresh root system, as the CLI does. */
export async function loginWith(
  h: JobHarness,
  flow: "browser" | "device" = "browser",
): Promise<StoredTokens> {
  const system = testSystem();
  try {
    return await runLogin(h.job, { flow, system, isTTY: true });
  } finally {
    system.shutdown();
  }
}
