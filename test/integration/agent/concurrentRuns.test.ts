import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { type EventModel, startEventModel } from "../../fakes/eventModel.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { startTestGateway, webhookConfig } from "../../helpers/gateway.js";
import { deliverSigned } from "../../helpers/http.js";
import { journalLines } from "../../helpers/runJournal.js";
import { type StatelessJsonMcp, serveStatelessJsonMcp } from "../../helpers/statelessJsonMcp.js";

/**
 * A burst of signed events, each waking a model run that calls, in one turn, a tool of a stdio server
 * (one call at a time, the default) and one of a Streamable HTTP server that declares
 * supports_parallel_tool_calls, shared by every run (docs/agent.md, docs/mcp.md). Every run's model turn
 * uses the same call ids, as many servers write them.
 */

const SERVER = fileURLToPath(new URL("../../fixtures/mcp/burst-server.mjs", import.meta.url));
const SECRET = "concurrent-runs-secret";
const EVENTS = 12;

/**
 * Calls of the HTTP server's "look" in flight now and the most at once; with `awaitOverlap`, a call waits
 * (up to 2 s) until another is in flight, once, so overlap does not hang on how fast a loaded machine is.
 */
const looks = { now: 0, most: 0, awaitOverlap: false };
function lookServer(): McpServer {
  const server = new McpServer({ name: "look", version: "1.0.0" });
  server.registerTool("look", { inputSchema: { event: z.string() } }, async ({ event }) => {
    looks.now += 1;
    looks.most = Math.max(looks.most, looks.now);
    for (let waited = 0; looks.awaitOverlap && looks.most < 2 && waited < 2000; waited += 10)
      await new Promise((resolve) => setTimeout(resolve, 10));
    looks.now -= 1;
    return { content: [{ type: "text", text: `looked at ${event}` }] };
  });
  return server;
}

let mcp: StatelessJsonMcp | undefined;
let url: string;
let model: EventModel;
beforeAll(async () => {
  mcp = await serveStatelessJsonMcp(lookServer);
  url = mcp.url;
  model = await startEventModel(["mcp__serial__work", "mcp__par__look"]);
});
afterAll(async () => {
  await model?.close();
  await mcp?.close();
});

/** The most `start` lines of the record without their `end` at one time. */
function mostOverlapping(record: readonly string[]): number {
  let open = 0;
  let most = 0;
  for (const line of record) {
    if (line.startsWith("start ")) open += 1;
    if (line.startsWith("end ")) open -= 1;
    most = Math.max(most, open);
  }
  return most;
}

describe.each([16])("a burst of %i-at-a-time runs sharing two MCP servers", (runs) => {
  it("serialises the stdio server's calls, overlaps the parallel server's, and delivers each reply to its own event", async () => {
    looks.most = 0;
    looks.awaitOverlap = runs > 1;
    const telegram = await startFakeTelegram();
    const gw = await startTestGateway({
      config: webhookConfig(
        {
          // Even events: each to the chat its payload names; odd ones, another route, to one fixed chat.
          own: {
            secret: SECRET,
            prompt: "event {number}",
            deliver: "telegram",
            deliver_extra: { chat_id: "{chat}" },
          },
          fixed: {
            secret: SECRET,
            prompt: "event {number}",
            deliver: "telegram",
            deliver_extra: { chat_id: "-200" },
          },
        },
        { rate_limit: 10_000 },
        {
          agent: {
            provider: "openai",
            model: "m",
            base_url: model.baseUrl,
            retries: 0,
            max_concurrent_runs: runs,
          },
          mcp_servers: {
            serial: { command: process.execPath, args: [SERVER, "${SVC_HOME}/record.txt"] },
            par: { url, supports_parallel_tool_calls: true },
          },
          platforms: { telegram: { enabled: true, token: "1:abc", base_url: telegram.url } },
        },
      ),
    });
    try {
      const answers = await Promise.all(
        Array.from({ length: EVENTS }, (_, i) =>
          i % 2 === 0
            ? deliverSigned(gw.gateway.port, "own", `d-${i}`, SECRET, { number: `EVT-${i}`, chat: `-1${i}` })
            : deliverSigned(gw.gateway.port, "fixed", `d-${i}`, SECRET, { number: `EVT-${i}` }),
        ),
      );
      expect(answers.map((a) => ("status" in a ? a.status : a.error))).toEqual(Array(EVENTS).fill(202));
      await vi.waitFor(() => expect(journalLines(gw.home.dir)).toHaveLength(EVENTS), {
        timeout: 30_000,
        interval: 50,
      });

      const sent = telegram.requests
        .filter((r) => r.path.endsWith("/sendMessage"))
        .map((r) => r.json as { chat_id: string; text: string });
      expect(sent).toHaveLength(EVENTS);
      for (const { chat_id, text } of sent) {
        const i = Number(/^reply for EVT-(\d+):/.exec(text)?.[1]);
        expect(text).toBe(`reply for EVT-${i}: worked on EVT-${i} | looked at EVT-${i}`);
        expect(String(chat_id)).toBe(i % 2 === 0 ? `-1${i}` : "-200");
      }
      expect(new Set(sentTexts(telegram)).size).toBe(EVENTS);

      const record = readFileSync(join(gw.home.dir, "record.txt"), "utf8").trim().split("\n");
      expect(record.filter((line) => line.startsWith("spawn "))).toHaveLength(1);
      expect(record.filter((line) => line.startsWith("start "))).toHaveLength(EVENTS);
      expect(mostOverlapping(record)).toBe(1);
      if (runs > 1) expect(looks.most).toBeGreaterThan(1);
      else expect(looks.most).toBe(1);

      const journal = journalLines<{ delivery_id: string; run: { outcome: string } }>(gw.home.dir);
      expect(new Set(journal.map((l) => l.delivery_id)).size).toBe(EVENTS);
      expect(journal.every((l) => l.run.outcome === "ok")).toBe(true);
      const history = readFileSync(join(gw.home.dir, "deliveries", "history.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { kind: string; id: string; outcome: string });
      for (const kind of ["request", "run", "delivery"]) {
        const rows = history.filter((h) => h.kind === kind);
        expect(rows.map((h) => h.id).sort()).toEqual(journal.map((l) => l.delivery_id).sort());
      }
    } finally {
      await gw.stop();
      await telegram.close();
    }
  }, 60_000);
});
