import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { wantsPinnedPort } from "../../../src/actors/oauth/clientIdentity.js";
import { TokenStore } from "../../../src/io/oauth/tokenStore.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

const meta = (cimd: boolean) => ({
  authorizationServerUrl: "https://as.test",
  authorizationServerMetadata: {
    issuer: "https://as.test",
    authorization_endpoint: "https://as.test/a",
    token_endpoint: "https://as.test/t",
    response_types_supported: ["code"],
    ...(cimd ? { client_id_metadata_document_supported: true } : {}),
  },
  fetched_at: 0,
});

describe("callback port choice (spec 5.6)", () => {
  it("pins a never-reached server and one whose cached metadata advertises the document", () => {
    home = tempHome();
    const store = new TokenStore(join(home.dir, "mcp-tokens"), "s");
    expect(wantsPinnedPort({}, store)).toBe(true);
    store.saveMetadata(meta(true));
    expect(wantsPinnedPort({}, store)).toBe(true);
  });

  it.each([
    ["a pre-registered client_id", { client_id: "x" }],
    ["a client_secret", { client_secret: "x" }],
    ["a custom client_name", { client_name: "x" }],
    ["a token_endpoint_auth_method", { token_endpoint_auth_method: "client_secret_post" }],
    ["a redirect_uri override", { redirect_uri: "http://127.0.0.1:9999/callback" }],
    ["a redirect_port override", { redirect_port: 9999 }],
    ["cimd: false", { cimd: false }],
  ])("uses a random port with %s", (_why, settings) => {
    home = tempHome();
    expect(wantsPinnedPort(settings, new TokenStore(join(home.dir, "mcp-tokens"), "s"))).toBe(false);
  });

  it("uses a random port with cached metadata without document support, a stored registration, or a recorded rejection", () => {
    home = tempHome();
    const dir = join(home.dir, "mcp-tokens");
    const cached = new TokenStore(dir, "cached");
    cached.saveMetadata(meta(false));
    expect(wantsPinnedPort({}, cached)).toBe(false);

    const registered = new TokenStore(dir, "registered");
    registered.saveClient({ client_id: "dcr-1", redirect_uris: [], issuer: "https://as.test", kind: "dcr" });
    expect(wantsPinnedPort({}, registered)).toBe(false);
    // `svc mcp login` ignores the stored registration, so the port may be pinned again.
    expect(wantsPinnedPort({}, registered, true)).toBe(true);

    // The document client stored by a document login is no registration: its login stays pinned.
    const documented = new TokenStore(dir, "documented");
    documented.saveClient({
      client_id: "https://app.test/c.json",
      redirect_uris: [],
      issuer: "https://as.test",
      kind: "cimd",
    });
    expect(wantsPinnedPort({}, documented)).toBe(true);

    const rejected = new TokenStore(dir, "rejected");
    rejected.recordCimdOff("invalid_client");
    expect(wantsPinnedPort({}, rejected)).toBe(false);
  });
});
