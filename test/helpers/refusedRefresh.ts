import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tokenEndpointError } from "../../src/actors/oauth/tokenErrors.js";
import { oauthFetches } from "../../src/io/oauth/fetch.js";

/**
 * The error of a token refresh that a token endpoint on loopback refuses with `body` (400, of `type`), svc holding
 * `held` for the server (the first of them the refresh token it sends): what the user is shown of the answer.
 */
export function refusedRefresh(
  body: string,
  held: readonly string[],
  onTestFinished: (cleanup: () => Promise<void>) => void,
  type = "text/html",
): Promise<{ endpoint: string; message: string }> {
  return refusedTokenRequest(body, onTestFinished, { type, held, grant: "token refresh" });
}

/**
 * The error of a token request (a refresh, or a code's exchange) that a token endpoint on loopback refuses with
 * `body` (400, of `type`), svc holding `held` for the server: what the user is shown of the answer.
 */
export async function refusedTokenRequest(
  body: string,
  onTestFinished: (cleanup: () => Promise<void>) => void,
  {
    type,
    held = [],
    grant,
  }: { type: string; held?: readonly string[]; grant: "token refresh" | "token exchange" },
): Promise<{ endpoint: string; message: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(400, { "content-type": type }).end(body));
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  onTestFinished(() => new Promise<void>((closed) => server.close(() => closed())));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  const fetches = oauthFetches(undefined, undefined, undefined, () => held);
  const form =
    grant === "token refresh"
      ? { grant_type: "refresh_token", refresh_token: held[0] ?? "r-1" }
      : { grant_type: "authorization_code", code: "c-1" };
  await fetches.token(endpoint, { method: "POST", body: new URLSearchParams(form).toString() });
  const { message } = tokenEndpointError("s", grant, fetches, endpoint, new Error("invalid_grant"));
  return { endpoint, message };
}
