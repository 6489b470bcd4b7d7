import type { AddClientAuthentication } from "@modelcontextprotocol/sdk/client/auth.js";
import type { AuthorizationServerMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";
import * as oauth from "oauth4webapi";
import { SvcError } from "../../errors.js";

/** Client authentication at the token endpoint that svc implements (`token_endpoint_auth_method`). */
export const CLIENT_AUTH_METHODS = [
  "none",
  "client_secret_basic",
  "client_secret_post",
  "client_secret_jwt",
] as const;

interface ClientInfo {
  readonly client_id: string;
  readonly client_secret?: string | undefined;
  readonly token_endpoint_auth_method?: string | undefined;
}

/**
 * The method a token request uses: the configured one (or the one the registration answered) always
 * wins, whatever the server's metadata lists; without one, `client_secret_basic` when there is a secret
 * (RFC 6749 2.3.1), `client_secret_post` when the server lists only that, else `none`.
 */
export function authMethodOf(info: ClientInfo, supported: readonly string[] = []): string {
  const declared = info.token_endpoint_auth_method;
  if (declared !== undefined && declared !== "") return declared;
  if (info.client_secret === undefined) return "none";
  return supported.includes("client_secret_post") && !supported.includes("client_secret_basic")
    ? "client_secret_post"
    : "client_secret_basic";
}

/** oauth4webapi's client authentication for one client (device flow, and the SDK hook below). */
export function clientAuthFor(
  serverName: string,
  info: ClientInfo,
  supported: readonly string[] = [],
): oauth.ClientAuth {
  const method = authMethodOf(info, supported);
  if (method === "none") return oauth.None();
  if (!(CLIENT_AUTH_METHODS as readonly string[]).includes(method)) {
    throw new SvcError(
      "oauth",
      `${serverName}: token_endpoint_auth_method ${method} is not supported by svc — use ${CLIENT_AUTH_METHODS.join(", ")}`,
    );
  }
  const secret = info.client_secret;
  if (secret === undefined || secret === "") {
    throw new SvcError(
      "oauth",
      `${serverName}: token_endpoint_auth_method ${method} needs a client secret — set oauth.client_secret under mcp_servers.${serverName}`,
    );
  }
  if (method === "client_secret_post") return oauth.ClientSecretPost(secret);
  if (method === "client_secret_jwt") return oauth.ClientSecretJwt(secret);
  return secretBasic(secret);
}

/** RFC 6749 2.3.1 form encoding that leaves unreserved characters (`-`, `.`, `_`, `~`) as they are. */
const formEncode = (text: string) => encodeURIComponent(text).replace(/%20/g, "+");

/**
 * HTTP Basic. Not oauth4webapi's `ClientSecretBasic`: it also percent-encodes `-` and `.`, which
 * servers that compare the raw `id:secret` (common) refuse; this encodes only what must be encoded.
 */
function secretBasic(secret: string): oauth.ClientAuth {
  return (_as, client, _body, headers) => {
    const credentials = `${formEncode(client.client_id)}:${formEncode(secret)}`;
    headers.set("authorization", `Basic ${Buffer.from(credentials).toString("base64")}`);
  };
}

/** The same authentication as the SDK's `addClientAuthentication` hook (code exchange, refresh). */
export function sdkClientAuth(serverName: string, info: ClientInfo): AddClientAuthentication {
  return async (headers, params, url, metadata) => {
    const as = (metadata ?? { issuer: new URL(url).origin }) as AuthorizationServerMetadata;
    const auth = clientAuthFor(serverName, info, as.token_endpoint_auth_methods_supported ?? []);
    await auth(as as unknown as oauth.AuthorizationServer, { client_id: info.client_id }, params, headers);
  };
}
