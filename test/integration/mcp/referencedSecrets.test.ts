import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import pino from "pino";
import { describe, expect, it, vi } from "vitest";
import { redactInspection } from "../../../src/actors/inspector.js";
import { secretListsRead } from "../../../src/io/credentials.js";
import { pinoOptions } from "../../../src/io/log.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { buildServer } from "../../fixtures/mcp/server.mjs";
import { entry, stdioEntry, useHubs } from "./harness.js";

/**
 * Spec 2.3 puts secrets in the profile's `.env`. A value taken from it is a secret wherever the entry
 * puts it — an `env` value of any name, an argument — and a server that quotes a credential in a tool
 * call's refusal must not put it into the call's error either.
 */
const PAT = "ghp_0123456789abcdefSECRET";
const DB_PASSWORD = "hunter2-db-pw";
const hubs = useHubs();

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

describe("the gateway's own secrets (model API key, webhook secrets) in what a server says", () => {
  // Not the entry's: a filesystem server that read config.yaml or .env (a payload talked the model into it).
  const KEY = "sk-gateway-model-key-0123";
  const ROUTE_SECRET = "route-secret-4567";
  const hidden = { hiddenValues: () => [KEY, ROUTE_SECRET] };

  it("a log message, stderr lines and the failure quoting them show [redacted]", async () => {
    const log = captureLogger();
    const printed = `console.error("read .env: MODEL_KEY=" + process.env.K + " secret: " + process.env.R); process.exit(3)`;
    const hub = hubs.hub(
      hubs.home,
      {
        fx: stdioEntry("legacy", { env: { SEEN: `${KEY} / ${ROUTE_SECRET}` } }, ["--log-tool"]),
        dies: entry({ command: process.execPath, args: ["-e", printed], env: { K: KEY, R: ROUTE_SECRET } }),
      },
      { ...hidden, logger: log.logger },
    );
    expect((await hub.settled("fx")).state).toBe("connected");
    await hub.call("fx", "log-env", { name: "SEEN" });
    const failed = await hub.settled("dies");
    expect(failed.lastError).toContain("read .env: MODEL_KEY=[redacted] secret: [redacted]");
    await vi.waitFor(() =>
      expect(log.messages()).toEqual(
        expect.arrayContaining([
          "[mcp:fx] cfg: using [redacted] / [redacted]",
          "[mcp:dies] read .env: MODEL_KEY=[redacted] secret: [redacted]",
        ]),
      ),
    );
    const everything = JSON.stringify([log.lines(), hub.status()]);
    expect([everything.includes(KEY), everything.includes(ROUTE_SECRET)]).toEqual([false, false]);
  });
});

describe("the gateway's own secret where a failure's stderr tail is cut (its last 400 characters)", () => {
  // Holding a delimiter, and no entry's credential (QUOTED names none): redacted before the tail is cut.
  const SECRET = "pw12345678:SECRETtail99";

  it("shows none of it, not the end the cut kept", async () => {
    // The line's last 400 characters start inside the secret, after its colon.
    const printed = `console.error("key " + process.env.QUOTED + " " + "y".repeat(391)); process.exit(3)`;
    const hub = hubs.hub(
      hubs.home,
      { dies: entry({ command: process.execPath, args: ["-e", printed], env: { QUOTED: SECRET } }) },
      { hiddenValues: () => [SECRET] },
    );
    const failed = await hub.settled("dies");
    expect(failed.lastError).toBe(
      `mcp_servers.dies: the server process exited (code 3) before the MCP handshake finished — its stderr: ...${`key [redacted] ${"y".repeat(391)}`.slice(-400)}`,
    );
    expect(failed.lastError).not.toContain("tail99");
  });
});

describe("the gateway's own secrets, thousands with as many stored subscriptions, at each stderr line", () => {
  it("a line reads no list of them whole while none changed; the first line after a change is redacted of the new one", async () => {
    let hidden: readonly string[] = Object.freeze(
      Array.from({ length: 1000 }, (_, i) => `whsec-${String(i).padStart(5, "0")}`),
    );
    // How many lists had been read whole when each line reached the log (its write is synchronous).
    const lines: { msg: string; read: number }[] = [];
    const logger = pino(pinoOptions("debug"), {
      write: (line: string) => {
        const msg = String((JSON.parse(line) as { msg?: string }).msg);
        if (!msg.startsWith("[mcp:dies] line")) return;
        lines.push({ msg, read: secretListsRead() });
        // A subscription added between two lines (svc webhook subscribe): the store gives a new array.
        if (msg.startsWith("[mcp:dies] line 2")) hidden = Object.freeze([...hidden, "whsec-added-1"]);
      },
    });
    const printed = `console.error("line 1 whsec-00007\\nline 2 whsec-00008\\nline 3 whsec-added-1\\nline 4 whsec-00009"); process.exit(3)`;
    const hub = hubs.hub(
      hubs.home,
      { dies: entry({ command: process.execPath, args: ["-e", printed] }) },
      { hiddenValues: () => hidden, logger },
    );
    await hub.settled("dies");
    await vi.waitFor(() => expect(lines).toHaveLength(4), { timeout: 10_000, interval: 20 });
    expect(lines.map((line) => line.msg)).toEqual([
      "[mcp:dies] line 1 [redacted]",
      "[mcp:dies] line 2 [redacted]",
      "[mcp:dies] line 3 [redacted]",
      "[mcp:dies] line 4 [redacted]",
    ]);
    const [one, two, three, four] = lines.map((line) => line.read) as [number, number, number, number];
    expect([two - one, three - two > 0, four - three]).toEqual([0, true, 0]);
  });
});

describe("secrets referenced from .env", () => {
  it("a failed call's result (isError) quoting one shows [redacted], as a thrown error does", async () => {
    hubs.home.write(".env", `TOKEN=${PAT}\n`);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
    const hub = hubs.hub(hubs.home, {
      fx: stdioEntry("legacy", { env: { TOKEN: "${TOKEN}" } }, ["--log-tool"]),
    });
    expect((await hub.settled("fx")).state).toBe("connected");
    const result = (await hub.call("fx", "refuse-env", { name: "TOKEN" })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    expect([result.isError, result.content[0]?.text]).toEqual([true, "bad token [redacted]"]);
  });

  it("a stdio server printing them (env of any name, an argument, a URL's password) shows [redacted]", async () => {
    hubs.home.write(".env", `GH_PAT=${PAT}\nDBPW=${DB_PASSWORD}\n`);
    const script =
      'console.error("GH=" + process.env.GH + " DB=" + process.env.DATABASE_URL + " arg=" + process.argv[1]); process.exit(3)';
    const hub = hubs.hub(hubs.home, {
      s: entry({
        command: process.execPath,
        args: ["-e", script, "${GH_PAT}"],
        env: { GH: "${GH_PAT}", DATABASE_URL: "postgres://app:${env:DBPW}@db.internal/app" },
      }),
    });
    const status = await hub.settled("s");
    expect(status.state).toBe("failed");
    expect(status.lastError).toContain(
      "GH=[redacted] DB=postgres://app:[redacted]@db.internal/app arg=[redacted]",
    );
    expect(status.lastError).not.toContain(PAT);
    expect(status.lastError).not.toContain(DB_PASSWORD);
  });

  it("a tool call refused with a body quoting the X-Api-Key header fails with the key [redacted]", async () => {
    // An API gateway in front of a real SDK server that refuses tools/call for a key lacking a scope.
    const server = createServer(async (req, res) => {
      if (req.method !== "POST") return void res.writeHead(405).end();
      const message = (await body(req)) as { method?: string };
      if (message.method === "tools/call") {
        res
          .writeHead(403, { "content-type": "text/plain" })
          .end(`key ${req.headers["x-api-key"]} lacks scope tools:call`);
        return;
      }
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
      await buildServer("legacy").connect(transport);
      await transport.handleRequest(req, res, message);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      hubs.home.write(".env", "API_KEY=ak-live-verysecret-42\n");
      const hub = hubs.hub(hubs.home, {
        g: entry({
          url: `http://127.0.0.1:${port}/mcp`,
          headers: { "X-Api-Key": "${API_KEY}" },
          skip_preflight: true,
        }),
      });
      expect((await hub.settled("g")).state).toBe("connected");
      const failure = await hub.call("g", "add", { a: 1, b: 2 }).then(
        () => "answered",
        (err: Error) => err.message,
      );
      expect(failure).toContain("key [redacted] lacks scope tools:call");
      expect(failure).not.toContain("ak-live-verysecret-42");
      expect(JSON.stringify(hub.status())).not.toContain("ak-live-verysecret-42");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("a server's log message or progress message quoting a credential is written [redacted]", async () => {
    hubs.home.write(".env", `GH_PAT=${PAT}\n`);
    const log = captureLogger();
    const hub = hubs.hub(
      hubs.home,
      { s: stdioEntry("legacy", { env: { GITHUB: "${GH_PAT}" } }, ["--log-tool"]) },
      { logger: log.logger },
    );
    expect((await hub.settled("s")).state).toBe("connected");
    await hub.call("s", "log-env", { name: "GITHUB" });
    await vi.waitFor(() => expect(log.messages()).toContain("[mcp:s] cfg: using [redacted]"), {
      timeout: 10_000,
    });
    // The progress notification comes right before the answer, often in the same read: it is logged too.
    expect(log.messages()).toContain('[mcp] s: "log-env" progress 1/2 — connecting with [redacted]');
    expect(log.lines().join("\n")).not.toContain(PAT);
  });

  it("a log message cut at 2000 characters inside a credential: no part of the credential is written", async () => {
    // A long key (a JWT, a PEM-encoded key) that the cut at SERVER_LOG_MAX_CHARS runs through.
    const long = `eyJ${"k".repeat(2100)}`;
    hubs.home.write(".env", `LONG_KEY=${long}\n`);
    const log = captureLogger();
    const hub = hubs.hub(
      hubs.home,
      { s: stdioEntry("legacy", { env: { SERVICE_KEY: "${LONG_KEY}" } }, ["--log-tool"]) },
      { logger: log.logger },
    );
    expect((await hub.settled("s")).state).toBe("connected");
    await hub.call("s", "log-env", { name: "SERVICE_KEY" });
    await vi.waitFor(
      () => expect(log.messages().some((m) => m.startsWith("[mcp:s] cfg: using "))).toBe(true),
      { timeout: 10_000 },
    );
    expect(log.messages()).toContain("[mcp:s] cfg: using [redacted]");
    expect(log.lines().join("\n")).not.toContain("kkkkkkkk");
  });

  it("the inspector's events (svc gateway run --inspect) carry no env value or header of the entry", async () => {
    hubs.home.write(".env", `GH_PAT=${PAT}\nAPI_KEY=ak-live-verysecret-42\n`);
    const events: string[] = [];
    const hub = hubs.hub(
      hubs.home,
      { s: stdioEntry("legacy", { env: { GH: "${GH_PAT}" } }) },
      { inspect: (event) => void events.push(JSON.stringify(redactInspection(event))) },
    );
    expect((await hub.settled("s")).state).toBe("connected");
    expect(events.some((e) => e.includes('"era":"legacy"'))).toBe(true);
    expect(events.join("\n")).not.toContain(PAT);
  });
});
