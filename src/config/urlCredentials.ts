/**
 * A URL query parameter whose value is a credential: named as one (`api_key`, `access_token`, `password`,
 * `pwd`, ...), a signed URL's signature (an Azure SAS's `sig`, S3's `X-Amz-Signature`, `signature`), or a
 * `jwt`. Wider than the names of `env` variables taken for credentials: a query holding a signature is
 * a key to what it names, and no query names a directory `PWD` holds.
 */
export const CREDENTIAL_QUERY_NAME =
  /key|token|secret|pass|pwd|auth|cred|session|cookie|signature|jwt|(?:^|[^a-z])sig(?:$|[^a-z])/i;

/**
 * A URL as a message may quote it: the password of `user:password@` and credential query values
 * (`?api_key=`, `&sig=`: `CREDENTIAL_QUERY_NAME`) replaced by `[redacted]`. Also a URL written without its
 * scheme (`me:pw@localhost:8080/mcp`, which a URL parser reads as the scheme "me:"), whose password would
 * otherwise be quoted back.
 */
export function withoutUrlCredentials(url: string): string {
  return (
    url
      // The password runs to the @, and may hold / ? # (a base64 token): the url is then refused, and quoted.
      // What is digits up to a / ? # or the end is a port (`host:8443/users/@me`), and `//` a scheme's.
      // A space in it too (a url is one word of a text, `textWithoutUrlCredentials`): a url alone may hold one.
      .replace(/^((?:[a-z][a-z0-9+.-]*:\/\/)?[^\s:@/]*:)(?!\d*(?:[/?#]|$))[^@]+@/i, "$1[redacted]@")
      .replace(/([?&])([^=&#]*)=([^&#]*)/g, (whole, sep: string, name: string) =>
        CREDENTIAL_QUERY_NAME.test(name) ? `${sep}${name}=[redacted]` : whole,
      )
  );
}

/**
 * Percent-decoding as curl and Python's `unquote` read a URL's user and password: each `%XX` is its byte
 * (runs of them UTF-8, a byte that is no UTF-8 U+FFFD), and a `%` not followed by two hex digits stays as
 * written, where `decodeURIComponent` throws a bare "URI malformed" (a generated password holding `%`).
 */
export function percentDecoded(text: string): string {
  return text.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) =>
    Buffer.from(run.replace(/%/g, ""), "hex").toString("utf8"),
  );
}

/**
 * Text that may hold URLs (a value a config message quotes back: `"redis://:pw@h:6379/0" x`,
 * `https://x/mcp?api_key=… x: y`): each word as `withoutUrlCredentials` shows it, the quotes, brackets,
 * commas and YAML's leading indicators (`@`, `*`, ...) around a word kept as written.
 */
export function textWithoutUrlCredentials(text: string): string {
  return text.replace(/\S+/g, (word) => {
    const [, lead = "", core = "", tail = ""] = /^(["'`[({<@%*&!]*)(.*?)(["'`\])}>,]*)$/s.exec(word) ?? [];
    return `${lead}${withoutUrlCredentials(core)}${tail}`;
  });
}

/**
 * A value (text, or a list or mapping of them) with the URL credentials of each text `[redacted]`, for a
 * message that quotes it: a mapping's keys too, as YAML makes `url: {https://u:pw@h/mcp}` a mapping whose
 * key is the URL.
 */
export function valueWithoutUrlCredentials(value: unknown): unknown {
  if (typeof value === "string") return textWithoutUrlCredentials(value);
  if (Array.isArray(value)) return value.map(valueWithoutUrlCredentials);
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      textWithoutUrlCredentials(key),
      valueWithoutUrlCredentials(item),
    ]),
  );
}

/** What a fix that writes a value back with its credentials `[redacted]` adds, so none is copied as such. */
export const CREDENTIALS_LEFT_OUT = " (its credentials shown as [redacted]: write yours in their place)";
