import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { Certs } from "../fixtures/mcp/certs.js";

/**
 * A Chat Completions endpoint over TLS with the test CA's server certificate, answering every request
 * with `content`, listening on 127.0.0.1 (port 0).
 */
export async function startTlsChatModel(certs: Certs, content: string): Promise<Server> {
  const model = createServer(
    { key: readFileSync(certs.serverKey), cert: readFileSync(certs.serverCert) },
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
