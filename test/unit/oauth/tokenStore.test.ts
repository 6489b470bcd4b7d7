import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { wantsPinnedPort } from "../../../src/actors/oauth/clientIdentity.js";
import { svcPaths } from "../../../src/config/paths.js";
import { safeFileStem, TokenStore, toStoredTokens } from "../../../src/io/oauth/tokenStore.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome | undefined;
afterEach(() => home?.cleanup());

describe("token store", () => {
  it("keeps every server name inside mcp-tokens/ with a visible, distinct file name", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), (a, b) => {
        const dir = "/x/mcp-tokens";
        const store = new TokenStore(dir, a);
        expect(dirname(store.tokensPath)).toBe(dir);
        expect(basename(store.tokensPath).startsWith(".")).toBe(false);
        if (a !== b) expect(safeFileStem(a)).not.toBe(safeFileStem(b));
      }),
    );
    expect(safeFileStem("../../etc/passwd")).toBe("%2E.%2F..%2Fetc%2Fpasswd");
    expect(safeFileStem("github")).toBe("github");
  });

  it("gives no two servers a file in common (gh.client's tokens are not gh's registration)", () => {
    const files = (name: string) => {
      const s = new TokenStore("/x", name);
      return [s.tokensPath, s.clientPath, s.metaPath, s.cimdOffPath, `${s.tokensPath}.lock`];
    };
    const gh = new TokenStore("/x", "gh");
    expect(new TokenStore("/x", "gh.client").tokensPath).not.toBe(gh.clientPath);
    // A case-insensitive file system (macOS, Windows) takes gh.Meta.json for gh.meta.json.
    expect(new TokenStore("/x", "gh.Meta").tokensPath.toLowerCase()).not.toBe(gh.metaPath.toLowerCase());
    const part = fc.constantFrom("a", ".", "client", "meta", "json", "%2E", "cimd-off", "lock");
    const name = fc.array(part, { minLength: 1, maxLength: 6 }).map((p) => p.join(""));
    fc.assert(
      fc.property(name, name, (a, b) => {
        if (a === b) return;
        const theirs = new Set(files(b));
        for (const f of files(a)) expect(theirs.has(f)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it("saves and reads back the login of a server whose name is too long for a file name (ENAMETOOLONG before)", () => {
    home = tempHome();
    const dir = join(home.dir, "mcp-tokens");
    // 300 ASCII characters, and 30 CJK ones (9 bytes each once percent-encoded): past the 255 bytes of a file name.
    const names = ["s".repeat(300), "s".repeat(299), "服".repeat(30), "服".repeat(29)];
    for (const name of names) {
      const store = new TokenStore(dir, name);
      const tokens = toStoredTokens(
        { access_token: `A-${name.length}`, token_type: "Bearer" },
        { issuer: "https://as.test", flow: "browser", now: 1 },
      );
      store.saveTokens(tokens);
      const client = { client_id: `c-${name.length}`, redirect_uris: ["http://127.0.0.1:1/callback"] };
      store.saveClient({ ...client, issuer: "https://as.test", kind: "dcr" });
      expect(new TokenStore(dir, name).readTokens()?.access_token).toBe(`A-${name.length}`);
      expect(new TokenStore(dir, name).readClient()?.client_id).toBe(`c-${name.length}`);
      // The temp file and the lock file beside the longest name fit as well.
      for (const file of [store.tokensPath, store.clientPath, store.metaPath, store.cimdOffPath])
        expect(Buffer.byteLength(basename(file)) + 40).toBeLessThanOrEqual(255);
    }
    expect(readdirSync(dir)).toHaveLength(names.length * 2);
    expect(safeFileStem("github")).toBe("github");
    expect(safeFileStem("s".repeat(150))).toBe("s".repeat(150));
  });

  it("writes tokens with mode 0600 and an absolute expiry, under the profile's own directory", () => {
    home = tempHome();
    const paths = svcPaths(home.dir, "work");
    expect(paths.mcpTokens).toBe(join(home.dir, "profiles", "work", "mcp-tokens"));
    const store = new TokenStore(paths.mcpTokens, "srv");
    const saved = toStoredTokens(
      { access_token: "A", token_type: "Bearer", expires_in: 3600, refresh_token: "R" },
      { issuer: "https://as.test", flow: "browser", now: 1_000_000 },
    );
    store.saveTokens(saved);
    expect(saved.expires_at).toBe(1_000_000 + 3_600_000);
    expect(statSync(store.tokensPath).mode & 0o777).toBe(0o600);
    expect(store.readTokens()).toEqual(saved);
    expect(svcPaths(home.dir).mcpTokens).toBe(join(home.dir, "mcp-tokens"));
  });

  it("replaces the file atomically: a reader never sees a partial file and no temp file is left", () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "srv");
    const big = "x".repeat(200_000);
    for (let i = 0; i < 20; i++) {
      store.saveTokens({ access_token: `${i}${big}`, token_type: "Bearer", issuer: "i", flow: "browser" });
      const seen = JSON.parse(readFileSync(store.tokensPath, "utf8")) as { access_token: string };
      expect(seen.access_token).toBe(`${i}${big}`);
    }
    expect(readdirSync(join(home.dir, "mcp-tokens"))).toEqual(["srv.json"]);
  });

  it("keeps a refresh token the server did not rotate", () => {
    const t = toStoredTokens(
      { access_token: "new", token_type: "Bearer" },
      { issuer: "i", flow: "device", now: 0, previous: { refresh_token: "old-r" } },
    );
    expect(t.refresh_token).toBe("old-r");
    expect(t.expires_at).toBeUndefined();
  });

  it("reports a corrupt token file with its path and the fix", () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "srv");
    home.write("mcp-tokens/srv.json", "{oops");
    expect(() => store.readTokens()).toThrow(
      /srv\.json: not valid JSON — run `svc mcp login srv`, which replaces it$/,
    );
  });

  it("reports a token file of zero bytes only (a power cut after the file grew) as such, with the fix", () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "srv");
    home.write("mcp-tokens/srv.json", "\0".repeat(100));
    expect(() => store.readTokens()).toThrow(
      /srv\.json: holds only zero bytes \(100 bytes\): its data never reached the disk \(a power cut or a crash as it was written\) — run `svc mcp login srv`, which replaces it$/,
    );
  });

  it("reports a tokens or registration file that is JSON but holds no access_token / client_id, naming the file and the fix", () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "srv", "work");
    for (const text of ["null", "{}", "[]", '{"access_token": 5}', '{"access_token": ""}']) {
      home.write("mcp-tokens/srv.json", text);
      expect(() => store.readTokens()).toThrow(
        /srv\.json: not a saved login \(no access_token in it\) — run `svc mcp login srv --profile work`, which replaces it$/,
      );
    }
    home.write("mcp-tokens/srv.client.json", '{"client_secret": "s"}');
    expect(() => store.readClient()).toThrow(
      /srv\.client\.json: not a client registration \(no client_id in it\) — run `svc mcp login srv --profile work`/,
    );
  });

  it("reads a metadata cache that is JSON but no discovery record (null, {}, an array, an edited one) as absent", () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "srv");
    for (const text of ["null", "{}", "[]", '"x"', '{"authorizationServerUrl":"https://as.test"}']) {
      home.write("mcp-tokens/srv.meta.json", text);
      expect(store.readMetadata()).toBeUndefined();
      // A login reads the cache to choose its callback port: a fresh start, not a TypeError.
      expect(wantsPinnedPort({}, store)).toBe(true);
    }
    const record = {
      authorizationServerUrl: "https://as.test",
      authorizationServerMetadata: { issuer: "https://as.test" },
      fetched_at: 0,
    };
    home.write("mcp-tokens/srv.meta.json", JSON.stringify(record));
    expect(store.readMetadata()).toEqual(record);
  });

  it("records and clears the document rejection marker", () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "srv");
    expect(store.cimdOff()).toBe(false);
    store.recordCimdOff("invalid_client");
    expect(store.cimdOff()).toBe(true);
    expect(statSync(store.cimdOffPath).mode & 0o777).toBe(0o600);
    store.clearCimdOff();
    expect(store.cimdOff()).toBe(false);
  });

  it("serialises refreshes across lock holders: the second sees the first's write", async () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "srv");
    store.saveTokens({ access_token: "0", token_type: "Bearer", issuer: "i", flow: "browser" });
    const bump = () =>
      store.withLock(async () => {
        const n = Number(store.readTokens()?.access_token);
        await new Promise((r) => setImmediate(r));
        store.saveTokens({ access_token: String(n + 1), token_type: "Bearer", issuer: "i", flow: "browser" });
      });
    await Promise.all([bump(), bump(), bump()]);
    expect(store.readTokens()?.access_token).toBe("3");
  });
  it("narrows an mcp-tokens/ directory that already existed wider (an older svc, a restored backup) to 0700 when it saves a login there", () => {
    home = tempHome();
    const dir = join(home.dir, "mcp-tokens");
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const store = new TokenStore(dir, "srv");
    store.saveTokens({ access_token: "A", token_type: "Bearer", issuer: "i", flow: "browser" });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    chmodSync(dir, 0o755);
    store.saveClient({
      client_id: "c",
      redirect_uris: ["http://127.0.0.1:27890/callback"],
      issuer: "i",
      kind: "dcr",
    });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});
