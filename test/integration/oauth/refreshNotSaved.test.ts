import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { startFakeAs } from "../../fakes/authServer/fakeAs.js";
import { startProtectedMcp } from "../../fakes/authServer/mcpServer.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { CAN_MOUNT, mountSmallDisk, unmountSmallDisks } from "../../helpers/smallDisk.js";
import { harness, loginWith } from "./helpers.js";

/**
 * A refresh whose answer the disk could not take (full) threw the new tokens away: the connect failed
 * although the authorization server had answered, and the file kept the refresh token it had just replaced,
 * so the next refresh once there was room again sent a used token — an authorization server with reuse
 * detection revoked the whole grant, and the server needed `svc mcp login` again.
 */
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (closers.length) await closers.pop()?.();
  unmountSmallDisks();
});

/** A small tmpfs (mounting one takes root) with SVC_HOME on it. */
function smallDisk(): { home: string; fill(leftPages: number): void; empty(): void } {
  const disk = mountSmallDisk("svc-refresh-");
  const home = join(disk.dir, "home");
  mkdirSync(home);
  return { home, fill: (leftPages) => disk.fill(leftPages), empty: () => disk.empty() };
}

describe.runIf(CAN_MOUNT)("a token refresh on a full disk", { timeout: 60_000 }, () => {
  it("goes on with the new tokens in memory, saves them at the next refresh, and the grant survives", async () => {
    const disk = smallDisk();
    const as = await startFakeAs({ reuseRevokesFamily: true });
    closers.push(as.close);
    const mcp = await startProtectedMcp(
      () => as.url,
      async (token) => as.active(token),
    );
    closers.push(mcp.close);
    const h = harness(disk.home, "notes", mcp.url, { cimd: false });
    const saved = await loginWith(h);
    h.job.store.saveTokens({ ...saved, expires_at: saved.obtained_at as number });
    const before = readFileSync(h.job.store.tokensPath, "utf8");
    const entry = { url: mcp.url, auth: "oauth" as const, oauth: { cimd: false } };
    const log = captureLogger();
    const at = (ms: number) =>
      makeJob("notes", entry, { paths: svcPaths(disk.home), logger: log.logger, now: () => Date.now() + ms });

    // Room for the refresh's lock file, none for the tokens it writes.
    disk.fill(1);
    const refreshed = await usableTokens(at(3600_000));
    expect(as.active(refreshed.access_token)).toBe(true);
    expect(readFileSync(h.job.store.tokensPath, "utf8")).toBe(before);
    expect(log.messages()).toContain(
      `[oauth] access token refreshed, but not saved (cannot write ${h.job.store.tokensPath}: the disk is full (ENOSPC) — the file is unchanged; free some space): this process goes on with the new tokens and saves them at the next refresh; until then the file holds a refresh token the authorization server may have replaced, so a restart or another svc command for notes may need \`svc mcp login notes\``,
    );
    // Later connects of this process use them.
    expect((await usableTokens(at(3600_000))).access_token).toBe(refreshed.access_token);

    disk.empty();
    const next = await usableTokens(at(2 * 7200_000));
    expect(as.revokedFamilies).toBe(0);
    expect(as.active(next.access_token)).toBe(true);
    expect(JSON.parse(readFileSync(h.job.store.tokensPath, "utf8")).access_token).toBe(next.access_token);
    expect(log.messages()).toContain(
      `[oauth] the refreshed tokens are saved now (${h.job.store.tokensPath})`,
    );
  });
});
