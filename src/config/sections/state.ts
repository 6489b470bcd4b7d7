import { z } from "zod";
import { terminalText } from "../../io/terminalText.js";
import { type Quoting, quotingIssue } from "../describe.js";
import { unsetVariablesIn } from "../interpolate.js";
import { textWithoutUrlCredentials } from "../urlCredentials.js";

const WRITE_IT = "write it as redis://host:6379/0";

/**
 * A / ? or # before an @ after the scheme: a user or password written with one unencoded (a base64 password,
 * as Azure's keys are), where the URL ends its user and password. Asked only of a URL that failed otherwise:
 * a socket's `?path=` may hold an @ after its /.
 */
const CUT_CREDENTIALS = /^rediss?:\/\/[^@]*[/?#][^@]*@/i;
const CUT_CREDENTIALS_PROBLEM =
  "the user or password holds a / ? or # that is not percent-encoded, where the URL's user and password end — write them as %2F %3F %23 in the user and password (and @ : % as %40 %3A %25)";

/**
 * What keeps a `state.redis_url` from naming one Redis database, or undefined. The URL is never quoted
 * (it may hold a password). ioredis reads the database from the path (or `?db=`) and asks the server to
 * switch to whatever it finds there: a database that is not a number failed only at that switch, as an
 * unhandled rejection.
 */
export function redisUrlProblem(url: string): string | undefined {
  // An unset `${VAR}` keeps its text, which reads as no URL at all: name the variable instead.
  const unset = unsetVariablesIn(url)[0];
  if (unset !== undefined)
    return `\${${unset}} is not set — set ${unset} (${WRITE_IT.slice("write it as ".length)}) in the .env beside config.yaml or the environment`;
  // Other tools' ways to write a unix socket (unix:///run/redis.sock, a bare path): Redis's client takes one
  // as the `path` option of a redis:// URL.
  // So is a socket's path written where a redis:// URL has its database: after no host (`redis:///run/…`,
  // as unix:// writes it) or as a file ending in .sock; the database's "not a number" would not say so.
  const socketInPath =
    /^rediss?:\/\/(?:[^@/?#]*@)?\//i.test(url) || /^rediss?:\/\/[^/?#]*\/[^?#]*\.sock(?:[?#]|$)/i.test(url);
  if (/^(?:unix|redis\+unix|redis\+socket):/i.test(url) || url.startsWith("/") || socketInPath)
    return "a unix socket is given as ?path= of a redis:// URL — write it as redis://localhost/0?path=/run/redis/redis.sock (the database's number after localhost/)";
  if (!/^rediss?:\/\//i.test(url)) return `not a redis:// or rediss:// URL — ${WRITE_IT}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    if (CUT_CREDENTIALS.test(url)) return CUT_CREDENTIALS_PROBLEM;
    return `not a valid URL (check the host and that the port is 1-65535) — ${WRITE_IT}`;
  }
  // Redis's client decodes the user and password: a `%` not followed by two hex digits stops it at start
  // with a bare "URI malformed". The value is never quoted.
  try {
    decodeURIComponent(parsed.username);
    decodeURIComponent(parsed.password);
  } catch {
    return "the user or password holds a % that is not followed by two hex digits — write a % in them as %25 (and @ : / ? # as %40 %3A %2F %3F %23)";
  }
  const inPath = parsed.pathname.length > 1 ? parsed.pathname.slice(1) : null;
  const inQuery = parsed.searchParams.get("db");
  const db = inPath ?? inQuery;
  if (db !== null && !/^\d{1,9}$/.test(db)) {
    if (CUT_CREDENTIALS.test(url)) return CUT_CREDENTIALS_PROBLEM;
    return `the database (${inPath === null ? "?db=" : "the URL's path after the port"}) is not a number — ${WRITE_IT}, with the database's number at the end`;
  }
  // ioredis takes the path's database and ignores ?db= then: a different ?db= would be dropped unsaid.
  if (inPath !== null && inQuery !== null && inQuery !== inPath)
    return `names two databases (the path's ${inPath} and ?db=${/^\d{1,9}$/.test(inQuery) ? inQuery : "…"}; the path's would be used) — ${WRITE_IT}, with the database's number at the end only`;
  return undefined;
}

/**
 * Where what a 202 promises is kept: `local` (an append-only journal under `$SVC_HOME/state/`, the
 * embedded default) or `redis` (shared by several gateway processes).
 */
/**
 * Why `prefix` cannot start svc's Redis keys, or undefined (an empty one is refused as empty): the first
 * character outside letters, digits, `.`, `_` and `-`, with the prefix written with `-` in its place, or
 * its length past 64. A prefix holding a URL's credentials (a redis_url pasted here) is quoted without
 * them, and no prefix is made of it: the fix would hold the password; nor of one a `${VAR}` gave (`given`).
 */
function redisKeyPrefixProblem(prefix: string): Quoting | undefined {
  if (prefix === "" || /^[A-Za-z0-9_.-]{1,64}$/.test(prefix)) return undefined;
  const bad = /[^A-Za-z0-9_.-]/u.exec(prefix)?.[0];
  if (bad === undefined)
    return () => `${prefix.length} characters long — a prefix has at most 64: shorten it`;
  const shown = textWithoutUrlCredentials(prefix);
  const fixed = prefix.replace(/[^A-Za-z0-9_.-]+/gu, "-").replace(/^-+|-+$/g, "") || "svc";
  const fix =
    shown === prefix
      ? `write ${fixed.slice(0, 64)}`
      : `write a prefix of your own, or leave the key out for svc (none is made from this value: it holds a credential)${/^rediss?:\/\//i.test(prefix) ? "; a redis:// URL goes in redis_url" : ""}`;
  const rule = `a prefix is letters, digits, '.', '_' and '-' (svc adds the ":" after it)`;
  // One a `${VAR}` gave is quoted as the file writes it, and no prefix is made of it.
  return (quoted, given) =>
    given
      ? `got ${quoted} — ${rule}: write a prefix of your own, or leave the key out for svc`
      : `got ${terminalText(JSON.stringify(shown))}, which holds ${terminalText(JSON.stringify(bad))} — ${rule}: ${fix}`;
}

export const stateSchema = z
  .strictObject({
    backend: z.enum(["local", "redis"]).default("local"),
    redis_url: z.string().min(1).optional(),
    /** Every key svc writes in Redis starts with `<prefix>:`; instances that share work share it. */
    redis_key_prefix: z
      .string()
      .min(1)
      .superRefine((prefix, ctx) => {
        const problem = redisKeyPrefixProblem(prefix);
        if (problem !== undefined) ctx.addIssue(quotingIssue(prefix, problem));
      })
      .optional(),
  })
  .superRefine((state, ctx) => {
    if (state.backend === "redis" && state.redis_url === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["redis_url"],
        message: 'missing — backend "redis" needs redis_url: redis://host:6379/0',
      });
    }
    const problem = state.redis_url === undefined ? undefined : redisUrlProblem(state.redis_url);
    if (problem !== undefined) ctx.addIssue({ code: "custom", path: ["redis_url"], message: problem });
  })
  .default({ backend: "local" });
export type StateSettings = z.infer<typeof stateSchema>;
