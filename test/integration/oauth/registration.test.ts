import { readFileSync, statSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pinnedPortsForFile } from "../../helpers/pinnedPortsLock.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

// A first login to a server takes a pinned callback port (test/helpers/pinnedPortsLock.ts).
pinnedPortsForFile();

let home: TempHome;
const { as, resource } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

describe("dynamic client registration (RFC 7591)", () => {
  it("a stored registration whose client_secret_expires_at has passed is not reused: the login registers again", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "expiring", rs.url, { cimd: false });
    const nowSec = Math.floor(Date.now() / 1000);
    h.job.store.saveClient({
      client_id: "dcr-old",
      client_secret: "old-secret",
      client_secret_expires_at: nowSec - 60,
      redirect_uris: [],
      issuer: auth.url,
      kind: "dcr",
    });
    await loginWith(h);
    expect(auth.seen.filter((r) => r.path === "/register")).toHaveLength(1);
    expect(h.job.store.readClient()?.client_id).not.toBe("dcr-old");
    const token = auth.seen.find((r) => r.path === "/token");
    expect(token?.body.get("client_id")).not.toBe("dcr-old");
  });

  it("a stored registration whose secret never expires (0) or expires later is reused", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const nowSec = Math.floor(Date.now() / 1000);
    for (const [name, expiresAt] of [
      ["never", 0],
      ["later", nowSec + 3600],
    ] as const) {
      const h = harness(home.dir, name, rs.url, { cimd: false });
      h.job.store.saveClient({
        client_id: `dcr-${name}`,
        client_secret: "s3cret-value",
        client_secret_expires_at: expiresAt,
        redirect_uris: [],
        issuer: auth.url,
        kind: "dcr",
      });
      await loginWith(h);
      expect(h.job.store.readClient()?.client_id).toBe(`dcr-${name}`);
    }
    expect(auth.seen.filter((r) => r.path === "/register")).toHaveLength(0);
  });

  it("a registration made for another callback host or path is not reused (the server would refuse the redirect); one differing only in the loopback port is (RFC 8252 7.3)", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const stored = (id: string) => ({
      client_id: id,
      redirect_uris: ["http://127.0.0.1:27890/callback"],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
      issuer: auth.url,
      kind: "dcr" as const,
    });
    const moved = harness(home.dir, "moved", rs.url, { redirect_uri: "http://localhost/svc-cb" });
    moved.job.store.saveClient(stored("dcr-moved"));
    await loginWith(moved);
    const registered = auth.seen.filter((r) => r.path === "/register");
    expect(registered).toHaveLength(1);
    expect(JSON.parse(registered[0]?.raw ?? "{}").redirect_uris[0]).toMatch(
      /^http:\/\/localhost:\d+\/svc-cb$/,
    );
    expect(moved.job.store.readClient()?.client_id).not.toBe("dcr-moved");

    const portOnly = harness(home.dir, "portonly", rs.url, { cimd: false });
    portOnly.job.store.saveClient(stored("dcr-portonly"));
    await loginWith(portOnly);
    expect(auth.seen.filter((r) => r.path === "/register")).toHaveLength(1);
    expect(portOnly.job.store.readClient()?.client_id).toBe("dcr-portonly");
  });

  it("a browser login does not reuse a device login's registration (device_code + refresh_token grants): it registers again", async () => {
    home = tempHome();
    const auth = await as();
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "wasdevice", rs.url, { cimd: false });
    h.job.store.saveClient({
      client_id: "dcr-device",
      redirect_uris: [],
      grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
      issuer: auth.url,
      kind: "dcr",
    });
    await loginWith(h);
    expect(auth.seen.filter((r) => r.path === "/register")).toHaveLength(1);
    expect(h.job.store.readClient()?.client_id).not.toBe("dcr-device");
  });

  it("a registration error names the status and the OAuth error code, not an empty reason", async () => {
    home = tempHome();
    const auth = await as({
      registrationError: { status: 400, body: JSON.stringify({ error: "invalid_client_metadata" }) },
    });
    const h = harness(home.dir, "refused", (await resource([auth.url])).url, { cimd: false });
    await expect(loginWith(h)).rejects.toThrow(
      /^refused: dynamic client registration failed — \S+\/register answered 400: .*invalid_client_metadata/,
    );
    expect(h.job.store.readClient()).toBeUndefined();
  });

  it("a registration error quoting the earlier registration's secret and access token, which it does not send: they are redacted", async () => {
    home = tempHome();
    const auth = await as({
      registrationError: {
        status: 400,
        body: JSON.stringify({
          error: "invalid_client_metadata",
          error_description:
            "client dcr-old (secret old-Secret_4455, management rat-Old_7788) still registered",
        }),
      },
    });
    const h = harness(home.dir, "again", (await resource([auth.url])).url, { cimd: false });
    // Its secret has expired: the login registers again.
    h.job.store.saveClient({
      client_id: "dcr-old",
      client_secret: "old-Secret_4455",
      client_secret_expires_at: Math.floor(Date.now() / 1000) - 60,
      registration_access_token: "rat-Old_7788",
      redirect_uris: [],
      issuer: auth.url,
      kind: "dcr",
      // Kept with the registration as the answer gave it (RFC 7592), beside the fields the SDK reads.
    } as Parameters<typeof h.job.store.saveClient>[0]);
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^again: dynamic client registration failed — \S+\/register answered 400: /);
    expect(err.message).toContain("(secret [redacted], management [redacted]) still registered");
    expect(err.message).not.toMatch(/old-Secret_4455|rat-Old_7788/);
  });

  it("an HTML error page from the registration endpoint is reported as a short excerpt, not the whole page", async () => {
    home = tempHome();
    const page = `<html><body>${"Forbidden by policy. ".repeat(200)}</body></html>`;
    const auth = await as({ registrationError: { status: 403, body: page, contentType: "text/html" } });
    const h = harness(home.dir, "html", (await resource([auth.url])).url, { cimd: false });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(/^html: dynamic client registration failed — \S+\/register answered 403: /);
    expect(err.message.length).toBeLessThan(600);
  });

  it("a registration answered with the client_id alone (no redirect_uris or grant_types echoed) is used as registered", async () => {
    home = tempHome();
    const auth = await as({
      registrationError: { status: 201, body: JSON.stringify({ client_id: "terse-client-7731" }) },
    });
    const h = harness(home.dir, "terse", (await resource([auth.url])).url, { cimd: false });
    await loginWith(h);
    const client = h.job.store.readClient();
    expect(client?.client_id).toBe("terse-client-7731");
    const sent = JSON.parse(auth.seen.find((r) => r.path === "/register")?.raw ?? "{}");
    expect(client?.redirect_uris).toEqual(sent.redirect_uris);
    expect(client?.grant_types).toEqual(["authorization_code", "refresh_token"]);
    expect(auth.seen.find((r) => r.path === "/token")?.body.get("client_id")).toBe("terse-client-7731");
  });

  it("a success answer that is no registration (no client_id) names the field, not a schema dump", async () => {
    home = tempHome();
    const auth = await as({
      registrationError: { status: 201, body: JSON.stringify({ client_name: "svc" }) },
    });
    const h = harness(home.dir, "noid", (await resource([auth.url])).url, { cimd: false });
    const err = (await loginWith(h).catch((e: unknown) => e)) as Error;
    expect(err.message).toMatch(
      /^noid: dynamic client registration failed — \S+\/register answered 201 with no usable registration \(client_id: expected string, received undefined\)/,
    );
    expect(err.message).not.toContain("[redacted]");
    expect(h.job.store.readClient()).toBeUndefined();
  });

  it("a server that lists no `none` client authentication gets a registration for client_secret_basic, used at the token endpoint", async () => {
    home = tempHome();
    const auth = await as({ authMethods: ["client_secret_basic", "private_key_jwt"] });
    const h = harness(home.dir, "confidential", (await resource([auth.url])).url, { cimd: false });
    await loginWith(h);
    const registration = auth.seen.find((r) => r.path === "/register");
    expect(JSON.parse(registration?.raw ?? "{}").token_endpoint_auth_method).toBe("client_secret_basic");
    const client = h.job.store.readClient();
    expect(client?.client_secret).toBe("dcr-secret");
    const token = auth.seen.find((r) => r.path === "/token");
    const basic = Buffer.from(`${client?.client_id}:dcr-secret`).toString("base64");
    expect(token?.headers.authorization).toBe(`Basic ${basic}`);
  });

  it("a server that lists `none` (or no methods) gets a public-client registration", async () => {
    home = tempHome();
    const auth = await as({ authMethods: ["client_secret_post", "none"] });
    const h = harness(home.dir, "public", (await resource([auth.url])).url, { cimd: false });
    await loginWith(h);
    const registration = auth.seen.find((r) => r.path === "/register");
    expect(JSON.parse(registration?.raw ?? "{}").token_endpoint_auth_method).toBe("none");
  });

  it("keeps the registration_access_token and registration_client_uri in <server>.client.json, mode 0600", async () => {
    home = tempHome();
    const auth = await as();
    const h = harness(home.dir, "kept", (await resource([auth.url])).url, { cimd: false });
    await loginWith(h);
    const path = h.job.store.clientPath;
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    expect(saved.registration_access_token).toMatch(/^rat-/);
    expect(saved.registration_client_uri).toBe(`${auth.url}/register/client`);
  });
});
