import { existsSync } from "node:fs";
import { makeJob } from "../../actors/oauth/context.js";
import { type Revocation, revokeSavedGrant } from "../../actors/oauth/revoke.js";
import { secretScope } from "../../config/envFile.js";
import { loadConfig } from "../../config/load.js";
import { profileFlag, type SvcPaths } from "../../config/paths.js";
import { describeError, isSvcError, SvcError } from "../../errors.js";
import { renderEntry } from "../../io/mcp/render.js";
import { shownName } from "../../io/mcp/shownName.js";
import { oauthEntryOf } from "../../io/oauth/settings.js";
import { type StoredTokens, TokenStore } from "../../io/oauth/tokenStore.js";
import { newProfileTypo } from "../../io/profiles.js";
import { pastedWord } from "../../io/shellWord.js";
import { terminalText } from "../../io/terminalText.js";
import { cliLogger } from "../cliLogger.js";
import { assertFileInSight } from "../homeInSight.js";

/**
 * `svc mcp logout <server>`: revokes the saved grant at the authorization server that issued it (unless
 * `local`), then removes the saved tokens. The client registration and the cached discovery stay, so the
 * next `svc mcp login` reuses them. Under the tokens' lock, so a refresh by a running gateway cannot
 * write them back after the removal. A server no longer in config.yaml can still be logged out of: its
 * tokens are removed without revocation (its TLS and client settings are gone with its entry).
 */
export async function logoutServer(paths: SvcPaths, server: string, local: boolean): Promise<void> {
  const store = new TokenStore(paths.mcpTokens, server, paths.profile);
  // An SVC_HOME, or a directory in it, this user may not look into: no login is known to be missing.
  assertFileInSight(store.tokensPath, paths.home);
  if (!existsSync(store.tokensPath)) {
    // A misspelt --profile (wrok) has no login: the profile meant is named, as svc cron names it.
    const meant = newProfileTypo(paths.home, paths.profile);
    throw new SvcError(
      "oauth",
      `${shownName(server)}: not logged in${paths.profile === undefined ? "" : ` for profile ${paths.profile}`} — no saved login at ${store.tokensPath}${meant === undefined ? "" : ` (profile ${paths.profile} has no directory — did you mean ${meant}? svc mcp logout ${pastedWord(server)}${profileFlag(meant)})`}`,
    );
  }
  const revocation = await store.withLock(async () => {
    const outcome = local ? undefined : await revokeIfPossible(paths, server, store);
    store.clearTokens();
    return outcome;
  });
  process.stdout.write(
    revocation?.revoked === true
      ? `${shownName(server)}: logged out — the grant is revoked and ${store.tokensPath} removed\n`
      : `${shownName(server)}: logged out — ${store.tokensPath} removed${local ? " (--local: not revoked)" : ""}\n`,
  );
  if (revocation?.revoked === false)
    process.stderr.write(
      `warning: ${shownName(server)}: the grant was not revoked (${terminalText(revocation.why)}); it stays valid at its authorization server until it expires — revoke it there if it may have leaked\n`,
    );
}

async function revokeIfPossible(paths: SvcPaths, server: string, store: TokenStore): Promise<Revocation> {
  let tokens: StoredTokens | undefined;
  try {
    tokens = store.readTokens();
  } catch (err) {
    if (isSvcError(err, "store_corrupt")) return { revoked: false, why: "the saved login is damaged" };
    throw err;
  }
  if (tokens === undefined) return { revoked: false, why: "the saved login holds no access token" };
  const raw = loadConfig({ home: paths.home }).config.mcp_servers[server];
  if (raw === undefined || raw.auth !== "oauth")
    return { revoked: false, why: `mcp_servers.${server} with auth: oauth is not in ${paths.config}` };
  let entry: ReturnType<typeof oauthEntryOf>;
  try {
    // Its headers go with MCP requests only: one's unset ${VAR} does not stop the logout.
    entry = oauthEntryOf(server, renderEntry(server, { ...raw, headers: {} }, secretScope(paths)));
  } catch (err) {
    return { revoked: false, why: describeError(err) };
  }
  return revokeSavedGrant(makeJob(server, entry, { paths, logger: cliLogger() }), tokens);
}
