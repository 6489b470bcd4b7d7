import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerOptions } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateText } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/agent/modelError.js";
import { languageModel } from "../../../src/agent/provider.js";
import { isRetryable } from "../../../src/agent/retry.js";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";

/**
 * docs/agent.md, base_url (TLS): a model endpoint that refuses the TLS handshake with OpenSSL's `handshake
 * failure` (alert 40). Real TLS servers on loopback: one whose ciphers Node's client does not offer (TLS 1.2,
 * and TLS 1.3), and a TLS 1.2 one that requires a client certificate. Both kinds send the same alert, so the
 * error names both causes; neither is one a retry changes. The handshake ends before the client checks the
 * server's certificate, so no CA needs trusting here.
 */
let dir: string;
let certs: Certs;
const servers: Server[] = [];
/** What each server said of the handshake it refused (its `tlsClientError` codes), by port. */
const refusals = new Map<number, string[]>();

async function serving(options: ServerOptions): Promise<number> {
  const server = createServer(
    { key: readFileSync(certs.serverKey), cert: readFileSync(certs.serverCert), ...options },
    (_req, res) => res.end(),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  refusals.set(port, []);
  server.on("tlsClientError", (err: Error & { code?: string }) => refusals.get(port)?.push(String(err.code)));
  return port;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-model-tls-refused-"));
  certs = await makeCerts(dir);
});

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

async function failureAt(port: number): Promise<unknown> {
  const settings = {
    provider: "openai" as const,
    model: "m",
    base_url: `https://127.0.0.1:${port}/v1`,
    api_key: "sk-test",
  };
  return generateText({ model: languageModel(settings), prompt: "hi", maxRetries: 0 }).then(
    () => {
      throw new Error("the request succeeded");
    },
    (err: unknown) => err,
  );
}

/** What svc added to the error: from its ` — ` on (OpenSSL's own words hold none). */
const hintOf = (text: string): string => text.slice(text.indexOf(" — "));

const BOTH_CAUSES =
  " — the server refused the TLS handshake: either it has no TLS version or cipher in common with svc, which speaks TLS 1.2 and 1.3 (AES-GCM and ChaCha20 ciphers among others): let the server offer those; or it requires a client certificate (mTLS), which svc cannot send to a model endpoint: let it take svc's requests without one, or put a proxy in front of it that presents one";

describe("a model endpoint that refuses the TLS handshake with 'handshake failure'", () => {
  it("a TLS 1.2 server whose only cipher Node's client does not offer (no client certificate asked): both causes named, not a client certificate alone; not retried", async () => {
    const port = await serving({ maxVersion: "TLSv1.2", ciphers: "ECDHE-ECDSA-CAMELLIA256-SHA384" });
    const err = await failureAt(port);
    const text = describeModelError(err, []);
    expect(text).toMatch(
      new RegExp(
        `^model endpoint https://127\\.0\\.0\\.1:${port}/v1/chat/completions could not be reached: Cannot connect to API: .*alert handshake failure`,
      ),
    );
    expect(hintOf(text)).toBe(BOTH_CAUSES);
    expect(isRetryable(err)).toBe(false);
    expect(refusals.get(port)).toEqual(["ERR_SSL_NO_SHARED_CIPHER"]);
  });

  it("a TLS 1.3 server whose only cipher suite Node's client does not offer: the same", async () => {
    const port = await serving({ minVersion: "TLSv1.3", ciphers: "TLS_AES_128_CCM_8_SHA256" });
    const err = await failureAt(port);
    expect(hintOf(describeModelError(err, []))).toBe(BOTH_CAUSES);
    expect(isRetryable(err)).toBe(false);
    expect(refusals.get(port)).toEqual(["ERR_SSL_NO_SHARED_CIPHER"]);
  });

  it("a TLS 1.2 server that requires a client certificate: the same words, the client certificate among them; not retried", async () => {
    const port = await serving({
      maxVersion: "TLSv1.2",
      ca: readFileSync(certs.caCert),
      requestCert: true,
      rejectUnauthorized: true,
    });
    const err = await failureAt(port);
    expect(hintOf(describeModelError(err, []))).toBe(BOTH_CAUSES);
    expect(isRetryable(err)).toBe(false);
    expect(refusals.get(port)).toEqual(["ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE"]);
  });
});
