import { readFileSync, statSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oidcWithMcpPerFile } from "./helpers.js";

const shared = oidcWithMcpPerFile();
let home: TempHome;
afterEach(() => home?.cleanup());

/** Two `svc mcp login` of one server at once: each registers its own client; the files must stay a pair. */
describe("two logins of one server at the same time", () => {
  it("leave one whole token file (0600) and the registration its tokens were issued to", async () => {
    home = tempHome();
    const a = harness(home.dir, "s", shared.mcp.url, { cimd: false }, { freshClient: true });
    const b = harness(home.dir, "s", shared.mcp.url, { cimd: false }, { freshClient: true });
    const [ta, tb] = await Promise.all([loginWith(a), loginWith(b)]);
    expect(ta.access_token).not.toBe(tb.access_token);
    const saved = JSON.parse(readFileSync(a.job.store.tokensPath, "utf8"));
    expect([ta.access_token, tb.access_token]).toContain(saved.access_token);
    expect(statSync(a.job.store.tokensPath).mode & 0o777).toBe(0o600);
    // The refresh token is only accepted with the client it was issued to.
    a.job.store.saveTokens({ ...saved, expires_at: Date.now() - 1000 });
    const renewed = await usableTokens(a.job);
    expect(renewed.access_token).not.toBe(saved.access_token);
  });
});
