/**
 * `WWW-Authenticate` challenges (RFC 9110 section 11.6.1): a header may carry several challenges
 * (`DPoP algs="ES256", Bearer resource_metadata="..."`), schemes and parameter names are
 * case-insensitive, values are tokens or quoted strings.
 */
export interface Challenge {
  readonly scheme: string;
  readonly params: Readonly<Record<string, string>>;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+/;
const TOKEN68_ALONE = /^[A-Za-z0-9\-._~+/]+=*[ \t]*(?:,|$)/;

function quoted(text: string, from: number): { value: string; end: number } {
  let value = "";
  let i = from + 1;
  while (i < text.length && text[i] !== '"') {
    if (text[i] === "\\" && i + 1 < text.length) i++;
    value += text[i];
    i++;
  }
  return { value, end: i + 1 };
}

export function parseChallenges(header: string): Challenge[] {
  const challenges: Array<{ scheme: string; params: Record<string, string> }> = [];
  let i = 0;
  const skip = (chars: RegExp) => {
    while (i < header.length && chars.test(header[i] as string)) i++;
  };
  while (i < header.length) {
    skip(/[\s,]/);
    const name = TOKEN.exec(header.slice(i))?.[0];
    if (name === undefined) {
      i++;
      continue;
    }
    i += name.length;
    skip(/[ \t]/);
    const current = challenges.at(-1);
    if (header[i] === "=" && current !== undefined) {
      i++;
      skip(/[ \t]/);
      let value: string;
      if (header[i] === '"') {
        const q = quoted(header, i);
        value = q.value;
        i = q.end;
      } else {
        // Lenient: an unquoted URL (`resource_metadata=https://...`) is not a token but is meant whole.
        value = /^[^\s,]+/.exec(header.slice(i))?.[0] ?? "";
        i += value.length;
      }
      const key = name.toLowerCase();
      if (!(key in current.params)) current.params[key] = value;
      continue;
    }
    challenges.push({ scheme: name.toLowerCase(), params: {} });
    const token68 = TOKEN68_ALONE.exec(header.slice(i))?.[0];
    if (token68 !== undefined) i += token68.length;
  }
  return challenges;
}

/** The parameters of the Bearer challenge (RFC 6750 section 3; RFC 9728 section 5.1), if any. */
export function bearerParams(headers: Headers): Readonly<Record<string, string>> | undefined {
  const header = headers.get("www-authenticate");
  if (header === null) return undefined;
  return parseChallenges(header).find((c) => c.scheme === "bearer")?.params;
}
