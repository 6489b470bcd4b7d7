import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { SecureVersion } from "node:tls";
import type { Certs } from "../fixtures/mcp/certs.js";

export interface TlsChatModelOptions {
  /** Serves the CA's certificate for another host only (DNS:other.example) instead of the loopback one. */
  readonly otherHost?: boolean;
  /** Requires a client certificate the test CA issued (mTLS). */
  readonly clientCert?: boolean;
  /** The highest TLS version served (a TLS 1.2 server); default Node's, TLS 1.3. */
  readonly maxVersion?: SecureVersion;
}

/**
 * A Chat Completions endpoint over TLS with the test CA's server certificate, answering every request
 * with `content`, listening on 127.0.0.1 (port 0).
 */
export async function startTlsChatModel(
  certs: Certs,
  content: string,
  options: TlsChatModelOptions = {},
): Promise<Server> {
  const model = createServer(
    {
      key: readFileSync(options.otherHost ? certs.otherHostKey : certs.serverKey),
      cert: readFileSync(options.otherHost ? certs.otherHostCert : certs.serverCert),
      ...(options.clientCert
        ? { ca: readFileSync(certs.caCert), requestCert: true, rejectUnauthorized: true }
        : {}),
      ...(options.maxVersion === undefined ? {} : { maxVersion: options.maxVersion }),
    },
    (req, res) => {
      req.resume();
      req.on("end", () =>
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "chatcmpl-tls",
            object: "chat.completion",
            created: 1_700_000_000,
            model: "m",
            choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          }),
        ),
      );
    },
  );
  await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
  return model;
}
