/**
 * The path each platform's requests start with, which svc adds after `base_url` itself: a `base_url` copied
 * with it (`https://chat.example.com/api/v4`, `https://slack.com/api`, Meta's `https://graph.facebook.com/v21.0`)
 * sends every request to the path twice (`/api/v4/api/v4/posts`), and each delivery fails with the server's
 * 404, which says nothing of the setting. `shown` is how the message names what was found: Telegram's
 * `/bot<token>` holds the token, which is never quoted.
 */
const API_PATHS: Readonly<Record<string, { readonly pattern: RegExp; readonly shown?: string }>> = {
  telegram: { pattern: /\/bot\d+:[^/]*$/i, shown: "/bot<token>" },
  discord: { pattern: /\/api(?:\/v\d+)?$/i },
  slack: { pattern: /\/api$/i },
  signal: { pattern: /\/v[12]$/i },
  whatsapp: { pattern: /\/v\d+\.\d+$/i },
  matrix: { pattern: /\/_matrix(?:\/client(?:\/(?:v3|r0))?)?$/i },
  mattermost: { pattern: /\/api(?:\/v4)?$/i },
  dingtalk: { pattern: /\/v1\.0$/i },
  feishu: { pattern: /\/open-apis$/i },
  wecom: { pattern: /\/cgi-bin$/i },
  weixin: { pattern: /\/cgi-bin$/i },
  bluebubbles: { pattern: /\/api(?:\/v1)?$/i },
  sms: { pattern: /\/2010-04-01(?:\/Accounts(?:\/[^/]*)?)?$/i },
  home_automation: { pattern: /\/api$/i },
};

/**
 * Why `value`, a platform's `base_url`, ends in the path svc adds itself, with the base to write (but for one
 * a `${VAR}` gave, `given`, which is not written back); or undefined.
 */
export function apiPathInBaseUrl(platform: string, value: string, given = false): string | undefined {
  const spec = API_PATHS[platform];
  if (spec === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    return undefined;
  }
  const path = parsed.pathname.replace(/\/+$/, "");
  const found = spec.pattern.exec(path);
  if (found === null) return undefined;
  return `ends in ${spec.shown ?? found[0]}, a path svc adds to every request itself — write ${given ? "the base without it" : `${parsed.origin}${path.slice(0, found.index)}`}`;
}
