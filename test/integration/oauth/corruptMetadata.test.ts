import { readFileSync, writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oidcWithMcpPerFile } from "./helpers.js";

const shared = oidcWithMcpPerFile();
let home: TempHome;
afterEach(() => home?.cleanup());

/** `<server>.meta.json` is a cache of discovery results: a damaged one must not stop the login it tells you to run. */
describe("a cached metadata file that is not valid JSON", () => {
  it("is rediscovered by svc mcp login (fresh or not) and by a refresh, and rewritten", async () => {
    home = tempHome();
    const first = harness(home.dir, "s", shared.mcp.url, { cimd: false }, { freshClient: true });
    await loginWith(first);
    const meta = first.job.store.metaPath;
    writeFileSync(meta, "{garbage");
    await loginWith(harness(home.dir, "s", shared.mcp.url, { cimd: false }, { freshClient: true }));
    expect(() => JSON.parse(readFileSync(meta, "utf8"))).not.toThrow();
    writeFileSync(meta, "{garbage");
    await loginWith(harness(home.dir, "s", shared.mcp.url, { cimd: false }));
    writeFileSync(meta, "{garbage");
    const tokens = first.job.store.readTokens();
    first.job.store.saveTokens({ ...(tokens as NonNullable<typeof tokens>), expires_at: Date.now() - 1000 });
    const renewed = await usableTokens(first.job);
    expect(renewed.access_token).not.toBe(tokens?.access_token);
    // The refresh's discovery is cached again, so later connects (and the SDK's auth code) use it.
    expect(JSON.parse(readFileSync(meta, "utf8")).authorizationServerMetadata.token_endpoint).toMatch(
      /\/token$/,
    );
  });
});

describe("a damaged tokens or registration file", () => {
  it("fails the connect naming the file and the login to run; that login replaces both", async () => {
    home = tempHome();
    const h = harness(home.dir, "dmg", shared.mcp.url, { cimd: false }, { freshClient: true });
    await loginWith(h);
    writeFileSync(h.job.store.tokensPath, "{garbage");
    writeFileSync(h.job.store.clientPath, "{garbage");
    await expect(usableTokens(h.job)).rejects.toThrow(
      /dmg\.json: not valid JSON — run `svc mcp login dmg`, which replaces it$/,
    );
    await loginWith(harness(home.dir, "dmg", shared.mcp.url, { cimd: false }, { freshClient: true }));
    expect((await usableTokens(h.job)).access_token).toMatch(/./);
    expect(h.job.store.readClient()?.client_id).toMatch(/./);
  });
});
