import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationFull,
  OAuthProtectedResourceMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { SvcError } from "../../errors.js";
import { narrowMode } from "../privateMode.js";
import { writeFileAtomic, writeJsonAtomic } from "../stores/atomicFile.js";
import { withFileLock } from "../stores/fileLock.js";
import { directoryInPlaceFix, isDirectoryError, unreadableStoreFix } from "../stores/unreadableStoreFix.js";
import { zeroFilledProblem } from "../zeroFilled.js";

/** Tokens as stored: the token response plus an absolute expiry (epoch ms) and what they were issued for. */
export interface StoredTokens {
  readonly access_token: string;
  readonly token_type: string;
  readonly refresh_token?: string;
  readonly scope?: string;
  readonly id_token?: string;
  /** Absolute expiry, epoch milliseconds; absent when the server gave no `expires_in`. */
  readonly expires_at?: number;
  /** When the token was obtained, epoch milliseconds (its lifetime sets the refresh margin). */
  readonly obtained_at?: number;
  /** Authorization server that issued them. */
  readonly issuer: string;
  readonly resource?: string;
  /** `browser` or `device`: how they were obtained. */
  readonly flow: "browser" | "device";
}

/** A client registration (dynamic, document URL, or configured) kept next to the tokens. */
export interface StoredClient extends OAuthClientInformationFull {
  readonly issuer: string;
  /** `dcr`, `cimd`: how the client_id was obtained (configured clients are never stored). */
  readonly kind: "dcr" | "cimd";
}

export interface StoredMetadata {
  readonly resourceMetadata?: OAuthProtectedResourceMetadata;
  /** `scope` of the resource's 401 challenge, when it named one. */
  readonly challengedScope?: string;
  /** Scope the resource asked for with 403 `insufficient_scope` (step-up): added to later logins. */
  readonly requiredScope?: string;
  readonly authorizationServerUrl: string;
  readonly authorizationServerMetadata: AuthorizationServerMetadata;
  readonly fetched_at: number;
  /**
   * Set when no metadata was found and the endpoints are the default ones at the server's origin (MCP
   * 2025-03-26): the discovery requests and their statuses, which an error of those endpoints leads with.
   */
  readonly guessedAfter?: string;
}

/** A stem ending so would name another server's registration or discovery file (`gh.client` + `.json`). */
const SIBLING_SUFFIX = /\.(client|meta)$/i;

/**
 * The longest stem written whole: the longest name made from it (`.<stem>.client.json.<pid>.<12 hex>.tmp`,
 * the temp file of an atomic write) stays well inside the 255 bytes a file name may have.
 */
const STEM_MAX = 160;
/** How much of a longer stem is kept, before `~` and a digest of the whole name. */
const STEM_KEPT = 140;

/**
 * A server name made safe as a file name: anything outside `[A-Za-z0-9._-]` and a leading dot are
 * percent-encoded (UTF-8 bytes), so no name can climb out of the directory or hide a file; so is the
 * dot of a final `.client` or `.meta`, so that `gh.client`'s tokens are not `gh`'s registration file.
 * A stem past STEM_MAX characters (a 300-character name, or 20 CJK characters, 9 bytes each once
 * encoded) is cut and ends in `~` and a digest of the whole name (`~` is encoded in every other stem), so
 * its login can be saved (the file system refused the whole name: ENAMETOOLONG) and stays its own.
 */
export function safeFileStem(serverName: string): string {
  if (serverName === "") return "%00";
  const parts = Array.from(Buffer.from(serverName, "utf8")).map((b) => {
    const c = String.fromCharCode(b);
    return /[A-Za-z0-9_.-]/.test(c) && b < 128 ? c : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  });
  if (parts[0] === ".") parts[0] = "%2E";
  const encoded = parts.join("");
  if (encoded.length <= STEM_MAX) return encoded.replace(SIBLING_SUFFIX, "%2E$1");
  let kept = "";
  for (const part of parts) {
    if (kept.length + part.length > STEM_KEPT) break;
    kept += part;
  }
  return `${kept}~${createHash("sha256").update(serverName).digest("hex").slice(0, 16)}`;
}

function readJson<T>(path: string, serverName: string, profile?: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    // Another user's file, or a directory in its place: no login replaces it (its write would fail too).
    const fix = unreadableStoreFix(path, err);
    if (fix === undefined) throw err;
    throw new SvcError("config_unreadable", `${path}: cannot be read (${(err as Error).message}) — ${fix}`, {
      cause: err,
    });
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw damagedFile(path, zeroFilledProblem(text) ?? "not valid JSON", serverName, profile);
  }
}

/** A tokens or registration file svc cannot use, named with what is wrong and the login that replaces it. */
function damagedFile(path: string, what: string, serverName: string, profile?: string): SvcError {
  return new SvcError(
    "store_corrupt",
    `${path}: ${what} — run \`svc mcp login ${serverName}${profile === undefined ? "" : ` --profile ${profile}`}\`, which replaces it`,
  );
}

/** A JSON value (a file's) that is an object whose `key` is a non-empty string. */
function hasString(value: unknown, key: string): boolean {
  const field = (value as Record<string, unknown> | null)?.[key];
  return typeof value === "object" && !Array.isArray(value) && typeof field === "string" && field !== "";
}

/**
 * Tokens a refresh obtained that could not be written (a full disk), by tokens file: the authorization server
 * may have replaced the refresh token the file still holds (rotation), so this process goes on with these
 * while the file still holds the access token it held then (`over`); a login or logout since, which replaced
 * or removed the file, wins.
 */
const heldTokens = new Map<string, { readonly tokens: StoredTokens; readonly over: string | undefined }>();

/** The per-server files under `mcp-tokens/` of one profile. */
export class TokenStore {
  readonly tokensPath: string;
  readonly clientPath: string;
  readonly metaPath: string;
  readonly cimdOffPath: string;

  constructor(
    readonly dir: string,
    readonly serverName: string,
    /** The named profile these files belong to (its login command names it). */
    readonly profile?: string,
    /** How long a holder in another process is waited for (default 30 s); tests shorten it. */
    private readonly options: { readonly lockTimeoutMs?: number } = {},
  ) {
    const stem = safeFileStem(serverName);
    this.tokensPath = join(dir, `${stem}.json`);
    this.clientPath = join(dir, `${stem}.client.json`);
    this.metaPath = join(dir, `${stem}.meta.json`);
    this.cimdOffPath = join(dir, `${stem}.cimd-off`);
  }

  /**
   * The directory 0700 also when it already existed wider (made by an older svc or by hand, restored from a
   * backup): the files are 0600, but a readable directory still lists which servers one is logged in to.
   * Left as it is when it is not ours to change.
   */
  private narrowDir(): void {
    narrowMode(this.dir, 0o700);
  }

  /**
   * The saved tokens, or undefined when there are none; a file that is not valid JSON, or JSON without an
   * access token (`null`, `{"access_token": 5}`), fails naming the file and the login that replaces it.
   */
  readTokens(): StoredTokens | undefined {
    const saved = this.readRecord<StoredTokens>(this.tokensPath, "access_token", "a saved login");
    const held = heldTokens.get(this.tokensPath);
    if (held === undefined) return saved;
    if (saved?.access_token === held.over) return held.tokens;
    heldTokens.delete(this.tokensPath);
    return saved;
  }

  saveTokens(tokens: StoredTokens): void {
    writeJsonAtomic(this.tokensPath, tokens);
    this.narrowDir();
    heldTokens.delete(this.tokensPath);
  }

  /**
   * Saves a refresh's tokens; when the file cannot be written, keeps them for this process (`readTokens` gives
   * them) and returns the write's error.
   */
  keepTokens(tokens: StoredTokens): unknown {
    const held = heldTokens.get(this.tokensPath);
    try {
      this.saveTokens(tokens);
      return undefined;
    } catch (err) {
      // The write left the file as it was: the access token it still holds is the one these replace.
      heldTokens.set(this.tokensPath, {
        tokens,
        over: held === undefined ? this.savedAccessToken() : held.over,
      });
      return err;
    }
  }

  /** The access token the tokens file holds, undefined when it has none or cannot be read. */
  private savedAccessToken(): string | undefined {
    try {
      return this.readRecord<StoredTokens>(this.tokensPath, "access_token", "a saved login")?.access_token;
    } catch {
      return undefined;
    }
  }

  /** Writes the tokens `keepTokens` held in memory; true once written, false when there were none. */
  saveHeldTokens(): boolean {
    const held = heldTokens.get(this.tokensPath);
    if (held === undefined || this.readTokens() !== held.tokens) return false;
    this.saveTokens(held.tokens);
    return true;
  }

  /** The saved client registration, or undefined; a file without a `client_id` fails as `readTokens` does. */
  readClient(): StoredClient | undefined {
    return this.readRecord<StoredClient>(this.clientPath, "client_id", "a client registration");
  }

  /** A record of this server's, undefined when its file is absent; one without its string `key` is damaged. */
  private readRecord<T>(path: string, key: string, what: string): T | undefined {
    const value = readJson<unknown>(path, this.serverName, this.profile);
    if (value === undefined) return undefined;
    if (!hasString(value, key))
      throw damagedFile(path, `not ${what} (no ${key} in it)`, this.serverName, this.profile);
    return value as T;
  }

  saveClient(client: StoredClient): void {
    writeJsonAtomic(this.clientPath, client);
    this.narrowDir();
  }

  /**
   * The cached discovery results; a file that is not valid JSON, or JSON that is no discovery record
   * (`null`, `{}`, an edited one without the authorization server), is a cache miss (discovery runs again
   * and rewrites it), never an error that `svc mcp login` itself would stop on. One that cannot be read
   * (another user's, a directory in its place) fails naming the file and the fix: discovery could not
   * rewrite it either.
   */
  readMetadata(): StoredMetadata | undefined {
    let meta: StoredMetadata | undefined;
    try {
      meta = readJson<StoredMetadata>(this.metaPath, this.serverName);
    } catch (err) {
      if (err instanceof SvcError && err.code === "store_corrupt") return undefined;
      throw err;
    }
    return isStoredMetadata(meta) ? meta : undefined;
  }

  saveMetadata(meta: StoredMetadata): void {
    writeJsonAtomic(this.metaPath, meta);
    this.narrowDir();
  }

  /** Records a scope the resource requires (403 `insufficient_scope`) for the next login. */
  requireScope(scope: string): void {
    const meta = this.readMetadata();
    if (meta === undefined) return;
    const requiredScope = mergeScopes(meta.requiredScope, scope);
    if (requiredScope !== meta.requiredScope)
      this.saveMetadata({ ...meta, ...(requiredScope ? { requiredScope } : {}) });
  }

  cimdOff(): boolean {
    return existsSync(this.cimdOffPath);
  }

  recordCimdOff(reason: string): void {
    writeFileAtomic(this.cimdOffPath, `${new Date().toISOString()} ${reason}\n`);
  }

  /** `svc mcp login` forgets a recorded document rejection. */
  clearCimdOff(): void {
    try {
      rmSync(this.cimdOffPath, { force: true });
    } catch (err) {
      if (!isDirectoryError(err)) throw err;
      throw new SvcError("store_corrupt", `${this.cimdOffPath}: ${directoryInPlaceFix("this marker")}`, {
        cause: err,
      });
    }
  }

  clearClient(): void {
    rmSync(this.clientPath, { force: true });
  }

  clearTokens(): void {
    rmSync(this.tokensPath, { force: true });
  }

  /**
   * Cross-process lock on this server's token file (refresh and save). A holder that still runs is waited
   * for however old the lock looks (a refresh whose discovery takes several 30 s requests, a clock stepped
   * forward meanwhile): taken over, its refresh token would be sent a second time, which servers with
   * reuse detection punish by revoking the whole grant. Only a dead holder's lock is taken over, and one of
   * another PID namespace (whose pid cannot be checked here) once its holder no longer touches it
   * (FOREIGN_UNTOUCHED_MS: killed with its container); a hung one fails the wait naming the lock file.
   */
  withLock<T>(fn: () => T | Promise<T>): Promise<T> {
    // Holders in this process take turns before the file lock: the file lock's wait is for another
    // process, and a refresh here may take its whole request timeout, as long as that wait.
    const path = this.tokensPath;
    const locked = () =>
      withFileLock(path, fn, {
        timeoutMs: this.options.lockTimeoutMs ?? 30_000,
        staleMs: Number.POSITIVE_INFINITY,
      });
    const run = (turns.get(path) ?? Promise.resolve()).then(locked, locked);
    const done = run.then(
      () => undefined,
      () => undefined,
    );
    turns.set(path, done);
    void done.then(() => {
      if (turns.get(path) === done) turns.delete(path);
    });
    return run;
  }
}

/** The last lock holder of this process queued on each tokens file (see `withLock`). */
const turns = new Map<string, Promise<void>>();

/** A discovery record as `saveMetadata` writes it: the authorization server's URL and its metadata. */
function isStoredMetadata(value: unknown): value is StoredMetadata {
  const meta = value as Partial<StoredMetadata> | null | undefined;
  const asMeta = meta?.authorizationServerMetadata as unknown;
  return (
    typeof meta?.authorizationServerUrl === "string" &&
    asMeta !== null &&
    typeof asMeta === "object" &&
    !Array.isArray(asMeta)
  );
}

/** Space-separated scopes of `a` then those of `b` not already in it. */
export function mergeScopes(a: string | undefined, b: string | undefined): string | undefined {
  const all = [...new Set(`${a ?? ""} ${b ?? ""}`.split(/\s+/).filter((x) => x !== ""))];
  return all.length > 0 ? all.join(" ") : undefined;
}

/**
 * Converts a token response into what is stored, with an absolute expiry from `now`. An `expires_in` of 0
 * or less states no usable lifetime (as golang.org/x/oauth2 reads it): such a token has no `expires_at`
 * and serves until the server refuses it, instead of being refreshed before every request.
 *
 * A refresh answer (`previous`: the tokens it renews) that leaves out the refresh token, the scope or the
 * ID token keeps the saved one: RFC 6749 section 6 lets the server keep the refresh token, section 5.1
 * omits a scope identical to the one asked for (a refresh asks for the original grant's), and OpenID
 * Connect Core section 12.2 may send no new ID token. Fields no standard names (`refresh_token_expires_in`,
 * a vendor's) are not kept: svc reads none of them.
 */
export function toStoredTokens(
  tokens: OAuthTokens,
  extra: {
    issuer: string;
    resource?: string | undefined;
    flow: "browser" | "device";
    now: number;
    previous?: Pick<StoredTokens, "refresh_token" | "scope" | "id_token"> | undefined;
  },
): StoredTokens {
  const refresh = tokens.refresh_token ?? extra.previous?.refresh_token;
  const scope = tokens.scope ?? extra.previous?.scope;
  const idToken = tokens.id_token ?? extra.previous?.id_token;
  return {
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    ...(refresh !== undefined ? { refresh_token: refresh } : {}),
    ...(scope !== undefined ? { scope } : {}),
    ...(idToken !== undefined ? { id_token: idToken } : {}),
    ...(typeof tokens.expires_in === "number" && tokens.expires_in > 0
      ? { expires_at: extra.now + tokens.expires_in * 1000, obtained_at: extra.now }
      : {}),
    issuer: extra.issuer,
    ...(extra.resource !== undefined ? { resource: extra.resource } : {}),
    flow: extra.flow,
  };
}
