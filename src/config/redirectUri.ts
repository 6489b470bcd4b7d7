/**
 * `oauth.redirect_uri` rules: svc receives the redirect on a loopback listener, so the URI must be http
 * on a loopback host (RFC 8252 7.3), and it may not carry a fragment (RFC 6749 3.1.2). Checked when
 * `config.yaml` is loaded and again when a login binds its listener. Pure.
 */
export const LOOPBACK_REDIRECT_HOSTS: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

/** Why `raw` cannot be svc's redirect URI (worded to follow the value), or undefined when it can. */
export function redirectUriProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a URL — use http://127.0.0.1:<port>/callback";
  }
  if (url.protocol !== "http:" || !LOOPBACK_REDIRECT_HOSTS.includes(url.hostname))
    return "must be http:// on 127.0.0.1, localhost or [::1] (svc receives the redirect on a loopback listener) — e.g. http://127.0.0.1:8976/callback";
  if (raw.includes("#")) return "has a fragment (#...), which a redirect URI must not have — remove it";
  // The listener would take a free port while the server is sent :0, so the redirect would reach no one.
  if (url.port === "0")
    return "names port 0, which no redirect can reach — write the port the client's callback is registered with, or leave the port out (http://127.0.0.1/callback) to listen on a free one";
  return undefined;
}

/** The port a valid redirect URI names explicitly, or undefined (none, or not a URL). */
export function redirectUriPort(raw: string): number | undefined {
  try {
    const port = new URL(raw).port;
    return port === "" ? undefined : Number(port);
  } catch {
    return undefined;
  }
}
