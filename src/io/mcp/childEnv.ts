/**
 * The environment of a stdio server: a small allow-list from our own environment plus the entry's `env`.
 * Everything else (API keys, tokens, `.env` secrets) stays with the gateway; pass what a server needs
 * explicitly with `env: { KEY: ${KEY} }`.
 */
export const INHERITED_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TERM",
  "TMPDIR",
  "TZ",
];

export function childEnvironment(
  entryEnv: Readonly<Record<string, string>>,
  parent: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(parent)) {
    if (value === undefined || value.startsWith("()")) continue;
    // XDG_* name where a server keeps its config, cache and runtime files (XDG_RUNTIME_DIR for sockets).
    if (INHERITED_ENV.includes(key) || key.startsWith("LC_") || key.startsWith("XDG_")) env[key] = value;
  }
  return { ...env, ...entryEnv };
}
