/** `{dotted.path}` in a `coalesce.key` template (the path trimmed of spaces when it is looked up). */
export const KEY_PLACEHOLDER = /\{([^{}]+)\}/g;

/** The payload paths a `coalesce.key` looks up: the key itself (a bare dotted path), or each placeholder. */
export function coalesceKeyPaths(spec: string): string[] {
  if (!spec.includes("{")) return [spec.trim()];
  return [...spec.matchAll(KEY_PLACEHOLDER)].map((match) => (match[1] as string).trim());
}

/** `{__raw__}`: the whole payload in a prompt template; a key looks it up as a field of that name. */
export const RAW_KEY_PATH = "__raw__";

/**
 * The first path of a key that can never be found in a payload (empty, or with an empty segment: `{ }`,
 * `a..b`, `.a`, `a.`; or `__raw__`, which a prompt reads as the whole payload and no sender sends), as
 * written; such a key never resolves, so every event would run at once.
 */
export function unresolvableKeyPath(spec: string): string | undefined {
  return coalesceKeyPaths(spec).find(
    (path) => path === "" || path === RAW_KEY_PATH || path.split(".").includes(""),
  );
}

/**
 * A brace of the key outside its placeholders that has no partner (`{pull_request.number`, `number}`),
 * or undefined. Such a key is a typo: a `{` never closed makes the key constant text (every event of the
 * route in one group), a `}` in a bare path names a field no payload has (every event runs at once).
 * Paired braces around a placeholder (`{{repo}}`) render as text and are kept.
 */
export function unpairedBrace(spec: string): "{" | "}" | undefined {
  let open = 0;
  for (const char of spec.replace(KEY_PLACEHOLDER, "")) {
    if (char === "{") open += 1;
    else if (char === "}") {
      if (open === 0) return "}";
      open -= 1;
    }
  }
  return open > 0 ? "{" : undefined;
}
