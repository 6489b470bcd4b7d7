import type {
  AuthorizationServerMetadata,
  OAuthClientInformationFull,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import * as oauth from "oauth4webapi";
import { fromPromise } from "xstate";
import { SvcError } from "../../errors.js";
import type { OAuthFetches } from "../../io/oauth/fetch.js";
import { type StoredMetadata, type StoredTokens, toStoredTokens } from "../../io/oauth/tokenStore.js";
import { terminalText } from "../../io/terminalText.js";
import {
  type DeviceCode,
  type DeviceLoginInput,
  deviceLoginMachine,
  type PollResult,
} from "../../machines/deviceLogin.js";
import { resourceFor } from "./browserLogin.js";
import { clientAuthFor } from "./clientAuth.js";
import { type ClientChoice, discoverAndIdentify } from "./clientIdentity.js";
import type { OAuthJob } from "./context.js";
import { jobFetches } from "./jobFetches.js";
import { invalidScopeAdvice, scopeFor } from "./loginScope.js";
import { resourceAdvice, resourceRefused, sentResource } from "./resourceIndicator.js";
import { lastFailureAt, loginAdvice, loginCommand, tokenEndpointError } from "./tokenErrors.js";

interface DeviceHandle {
  readonly job: OAuthJob;
  readonly fetches: OAuthFetches;
  readonly meta: StoredMetadata;
  readonly client: ClientChoice;
  readonly deviceCode: string;
  readonly resource: string;
}

function requestOptions(meta: StoredMetadata, fetchFn: OAuthFetches["discovery"]) {
  return {
    [oauth.customFetch]: fetchFn as typeof fetch,
    // An authorization server the resource advertises on plain http (a local or docker-network server)
    // is spoken to over http, as the browser flow does; https servers stay https-only.
    [oauth.allowInsecureRequests]: new URL(meta.authorizationServerMetadata.issuer).protocol === "http:",
  };
}

function clientAuth(serverName: string, client: ClientChoice, meta: StoredMetadata): oauth.ClientAuth {
  return clientAuthFor(
    serverName,
    client.info,
    meta.authorizationServerMetadata.token_endpoint_auth_methods_supported ?? [],
  );
}

function asServer(meta: AuthorizationServerMetadata): oauth.AuthorizationServer {
  return meta as unknown as oauth.AuthorizationServer;
}

async function requestCode({ input }: { input: DeviceLoginInput }): Promise<DeviceCode> {
  const job = input.job as OAuthJob;
  const fetches = jobFetches(job, job.entry.oauth?.user_agent);
  const { meta, client } = await discoverAndIdentify(job, "device", fetches);
  const resource = resourceFor(meta, job.entry.url);
  const scope = scopeFor(job, meta);
  const sent = sentResource(job, resource);
  const params: Record<string, string> = {
    ...(sent !== undefined ? { resource: sent } : {}),
    ...(scope !== undefined ? { scope } : {}),
  };
  const as = asServer(meta.authorizationServerMetadata);
  const endpoint = String(
    (meta.authorizationServerMetadata as { device_authorization_endpoint?: string })
      .device_authorization_endpoint,
  );
  let response: oauth.DeviceAuthorizationResponse;
  try {
    const res = await oauth.deviceAuthorizationRequest(
      as,
      { client_id: client.info.client_id },
      clientAuth(job.serverName, client, meta),
      params,
      // The answer is read as real servers write it (src/io/oauth/deviceAnswer.ts).
      requestOptions(meta, fetches.deviceAuthorization),
    );
    response = await oauth.processDeviceAuthorizationResponse(as, { client_id: client.info.client_id }, res);
  } catch (err) {
    // RFC 8628 3.2: the scope refused; another login would ask for the same one.
    const failure = lastFailureAt(fetches, endpoint);
    const advice =
      failure?.error === "invalid_scope"
        ? invalidScopeAdvice(job, meta, loginCommand(job.serverName, "device", job.profile))
        : failure !== undefined && resourceRefused(failure.error, failure.excerpt)
          ? resourceAdvice(job, loginCommand(job.serverName, "device", job.profile))
          : `${loginAdvice(job.serverName, fetches, endpoint, client.kind === "configured", "device", job.profile)}, or log in with \`${loginCommand(job.serverName, "browser", job.profile)} --flow browser\``;
    throw tokenEndpointError(job.serverName, "device authorization request", fetches, endpoint, err, advice);
  }
  const handle: DeviceHandle = { job, fetches, meta, client, deviceCode: response.device_code, resource };
  return {
    userCode: response.user_code,
    verificationUri: response.verification_uri,
    ...(response.verification_uri_complete !== undefined
      ? { verificationUriComplete: response.verification_uri_complete }
      : {}),
    interval: response.interval ?? 5,
    expiresIn: response.expires_in,
    handle,
  };
}

async function poll({
  input,
}: {
  input: { device: DeviceCode; input: DeviceLoginInput };
}): Promise<PollResult> {
  const h = input.device.handle as DeviceHandle;
  const as = asServer(h.meta.authorizationServerMetadata);
  const client = { client_id: h.client.info.client_id };
  const seen = h.fetches.failures.length;
  try {
    const res = await oauth.deviceCodeGrantRequest(
      as,
      client,
      clientAuth(h.job.serverName, h.client, h.meta),
      h.deviceCode,
      {
        ...requestOptions(h.meta, h.fetches.token),
        additionalParameters: sentResource(h.job, h.resource) !== undefined ? { resource: h.resource } : {},
      },
    );
    const tokens = await oauth.processDeviceCodeResponse(as, client, res);
    return { kind: "tokens", tokens };
  } catch (err) {
    if (err instanceof oauth.ResponseBodyError) {
      const name = h.job.serverName;
      switch (err.error) {
        case "authorization_pending":
          return { kind: "pending" };
        case "slow_down": {
          // GitHub states the new interval in the answer; RFC 8628's +5 s applies when it does not.
          const interval = Number((err.cause as { interval?: unknown } | undefined)?.interval);
          return Number.isFinite(interval) && interval > 0
            ? { kind: "slow_down", interval }
            : { kind: "slow_down" };
        }
        case "access_denied":
          return {
            kind: "denied",
            message: `${name}: the device login was denied — run \`${loginCommand(name, "device", h.job.profile)}\` to try again`,
          };
        case "expired_token":
          return {
            kind: "expired",
            message: `${name}: the device code expired before it was approved — run \`${loginCommand(name, "device", h.job.profile)}\` again`,
          };
      }
    }
    const endpoint = h.meta.authorizationServerMetadata.token_endpoint;
    const error = tokenEndpointError(h.job.serverName, "device token request", h.fetches, endpoint, err);
    const advice = loginAdvice(
      h.job.serverName,
      h.fetches,
      endpoint,
      h.client.kind === "configured",
      "device",
      h.job.profile,
    );
    // RFC 8628 3.5: a poll that got no OAuth answer (connection failure, 5xx, 429) is retried with backoff.
    const transient = h.fetches.failures
      .slice(seen)
      .some((f) => f.status === 0 || f.status === 429 || f.status >= 500);
    const answered = h.fetches.failures.length > seen ? lastFailureAt(h.fetches, endpoint) : undefined;
    // Any other non-2xx answer without an OAuth error (a firewall's 403 page, a proxy's 404) is not the
    // authorization server's: the code may still be approved, so polling goes on at the interval.
    if (
      !transient &&
      !(err instanceof oauth.ResponseBodyError) &&
      answered !== undefined &&
      answered.status >= 300 &&
      answered.error === undefined
    ) {
      return {
        kind: "not_oauth",
        status: answered.status,
        answer: `${endpoint} answered ${answered.status}${answered.excerpt ? `: ${answered.excerpt}` : ""}`,
      };
    }
    if (transient && !(err instanceof oauth.ResponseBodyError)) {
      // The machine decides whether it polls again (RFC 8628 3.5 backoff, a bounded number of times): the
      // retry is logged by its `retrying` action, so the failure that ends the login is not called one.
      return { kind: "unreachable", message: `${error.message} — ${advice}`, reason: error.message };
    }
    throw new SvcError("oauth", `${error.message} — ${advice}`, { cause: err });
  }
}

async function save({ input }: { input: { device: DeviceCode; tokens: unknown } }): Promise<StoredTokens> {
  const h = input.device.handle as DeviceHandle;
  const t = input.tokens as oauth.TokenEndpointResponse;
  const stored = toStoredTokens(
    {
      access_token: t.access_token,
      token_type: t.token_type,
      ...(t.refresh_token !== undefined ? { refresh_token: t.refresh_token } : {}),
      ...(t.scope !== undefined ? { scope: t.scope } : {}),
      ...(t.expires_in !== undefined ? { expires_in: t.expires_in } : {}),
    },
    { issuer: h.meta.authorizationServerUrl, resource: h.resource, flow: "device", now: h.job.now() },
  );
  await h.job.store.withLock(() => {
    if (h.client.kind === "dcr") {
      h.job.store.saveClient({
        ...(h.client.info as OAuthClientInformationFull),
        issuer: h.meta.authorizationServerUrl,
        kind: "dcr",
      });
    } else if (h.client.kind === "configured") {
      // Spec 4: a login clears the stale registration; the configured client is never stored.
      h.job.store.clearClient();
    }
    h.job.store.saveTokens(stored);
  });
  return stored;
}

/** Spec 5.4: the device flow is started only by a person at a terminal. */
export function assertTerminal(serverName: string, isTTY: boolean, profile?: string): void {
  if (!isTTY) {
    throw new SvcError(
      "oauth",
      `${serverName}: the device login needs a terminal — run \`${loginCommand(serverName, "device", profile)}\` in an interactive shell on the gateway's host`,
    );
  }
}

/** The authorization server's URL and code are its own text: no escape sequence in them reaches the terminal. */
export function printDeviceCode(job: OAuthJob, device: DeviceCode): void {
  const shown = (text: string) => terminalText(text).replace(/\n/g, "\\n");
  job.print(
    `To log in to ${job.serverName}, open ${shown(device.verificationUri)} and enter the code: ${shown(device.userCode)}`,
  );
  if (device.verificationUriComplete !== undefined)
    job.print(`Or open this link directly: ${shown(device.verificationUriComplete)}`);
}

export const deviceLoginLogic = deviceLoginMachine.provide({
  actors: {
    requestCode: fromPromise(requestCode),
    poll: fromPromise(poll),
    save: fromPromise<unknown, { device: DeviceCode; tokens: unknown; input: DeviceLoginInput }>(save),
  },
  actions: {
    announce: ({ context }, params: { device: DeviceCode }) =>
      printDeviceCode(context.input.job as OAuthJob, params.device),
    retrying: ({ context }, params: { reason: string; waitMs: number }) =>
      (context.input.job as OAuthJob).logger.warn(
        { server: context.input.serverName, err: params.reason },
        `[oauth] device poll failed; retrying in ${Math.round(params.waitMs / 1000)} s`,
      ),
    notOAuth: ({ context }, params: { status: number; answer: string; intervalMs: number }) =>
      (context.input.job as OAuthJob).logger.warn(
        { server: context.input.serverName, err: params.answer },
        `[oauth] the token endpoint answered a device poll ${params.status} without an OAuth error; polling on every ${Math.round(params.intervalMs / 1000)} s until the code expires`,
      ),
  },
});
