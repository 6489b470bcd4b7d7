import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { registeredCallbackPort, wantsPinnedPort } from "../../../src/actors/oauth/clientIdentity.js";
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

  it("reuses the port of a stored registration's loopback callback, unless config fixes it or the login registers anew", () => {
    home = tempHome();
    const dir = join(home.dir, "mcp-tokens");
    let stores = 0;
    const client = (redirect_uris: string[], kind: "dcr" | "cimd" = "dcr") => {
      const store = new TokenStore(dir, `s${stores++}`);
      store.saveClient({ client_id: "c", redirect_uris, issuer: "https://as.test", kind });
      return store;
    };
    const registered = client(["https://app.test/cb", "http://127.0.0.1:41234/callback"]);
    expect(registeredCallbackPort({}, registered)).toBe(41234);
    expect(registeredCallbackPort({}, registered, true)).toBeUndefined();
    expect(registeredCallbackPort({ redirect_port: 9999 }, registered)).toBeUndefined();
    expect(
      registeredCallbackPort({ redirect_uri: "http://localhost:9/callback" }, registered),
    ).toBeUndefined();
    expect(registeredCallbackPort({ client_id: "x" }, registered)).toBeUndefined();
    expect(registeredCallbackPort({}, client(["http://127.0.0.1:27890/callback"], "cimd"))).toBeUndefined();
    expect(
      registeredCallbackPort({}, client(["http://127.0.0.1:0/callback", "http://127.0.0.1:70000/callback"])),
    ).toBeUndefined();
    expect(registeredCallbackPort({}, new TokenStore(dir, "none"))).toBeUndefined();
  });
});
