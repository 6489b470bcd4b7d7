import { randomBytes } from "node:crypto";
import { toPromise } from "xstate";
import { SvcError } from "../../errors.js";
import { BROWSER_LOGIN_TIMEOUT_MS, DEFAULT_DEVICE_TIMEOUT_S } from "../../io/oauth/settings.js";
import type { StoredTokens } from "../../io/oauth/tokenStore.js";
import type { LoginOutput } from "../../machines/oauthLogin.js";
import type { GatewaySystem } from "../system.js";
import { browserLoginLogic } from "./browserLogin.js";
import type { OAuthJob } from "./context.js";
import { assertTerminal, deviceLoginLogic } from "./deviceLogin.js";
import { loginCommand } from "./tokenErrors.js";

export type LoginFlow = "browser" | "device";

export interface RunLoginOptions {
  readonly flow: LoginFlow;
  readonly system: GatewaySystem;
  /** Whether a person sits at this terminal (`process.stdin.isTTY`); the device flow refuses otherwise. */
  readonly isTTY: boolean;
}

/**
 * Runs one login as a child actor of the root system (`oauthLogin` or `deviceLogin`) and resolves with
 * the saved tokens. Nothing is written unless the login succeeds.
 */
export async function runLogin(job: OAuthJob, options: RunLoginOptions): Promise<StoredTokens> {
  if (options.flow === "device") assertTerminal(job.serverName, options.isTTY, job.profile);
  const id = `${options.flow === "device" ? "deviceLogin" : "oauthLogin"}:${job.serverName}:${randomBytes(4).toString("hex")}`;
  const input = {
    serverName: job.serverName,
    loginCommand: loginCommand(job.serverName, options.flow, job.profile),
    job,
    timeoutMs:
      options.flow === "device"
        ? (job.entry.oauth?.timeout ?? DEFAULT_DEVICE_TIMEOUT_S) * 1000
        : BROWSER_LOGIN_TIMEOUT_MS,
  };
  const ref =
    options.flow === "device"
      ? options.system.spawn(id, deviceLoginLogic, input)
      : options.system.spawn(id, browserLoginLogic, input);
  const output = (await toPromise(ref)) as LoginOutput<StoredTokens>;
  if (!output.ok) {
    const cause = output.error.cause;
    throw cause instanceof SvcError ? cause : new SvcError("oauth", output.error.message, { cause });
  }
  return output.result;
}
