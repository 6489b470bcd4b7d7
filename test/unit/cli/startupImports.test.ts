import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, extname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, CLI_NODE_ARGS } from "../../helpers/cliEntry.js";
import { tempHome } from "../../helpers/home.js";

/**
 * The CLI's command groups and the gateway load the heavy dependencies only when they are used (the AI
 * SDK at the first model run, BullMQ/ioredis for the Redis backend, nodemailer at the first email, undici
 * at the first HTTP request to an MCP server, execa at the first process, cron-parser and luxon at the first
 * cron expression, re2js at the first regex filter, Ajv at the first MCP tool listing): importing them
 * resolves none.
 */

const ROOT = dirname(dirname(CLI_MAIN));
const EXT = extname(CLI_MAIN);
const HEAVY =
  /\/node_modules\/(ai|@ai-sdk\/[^/]+|bullmq|ioredis|nodemailer|undici|execa|cron-parser|luxon|re2js|ajv)\//;

/** Every module the tests below import, and whether it runs only in a worker thread (it may throw once loaded). */
const MODULES: ReadonlyMap<string, boolean> = new Map([
  ["cli/gateway", false],
  ["cli/mcp", false],
  ["cli/webhook", false],
  ["cli/config", false],
  ["cli/cron", false],
  ["cli/config/check", false],
  ["gateway/index", false],
  ["actors/oauth/provider", false],
  ["io/mcp/session", false],
  ["io/mcp/transport", false],
  ["agent/modelRunner", false],
  ["state/redisState", false],
  ["streams/pipeline", false],
  ["io/http/uwsThread", true],
]);

const moduleUrl = (module: string): string => pathToFileURL(join(ROOT, `${module}${EXT}`)).href;

/**
 * Each import resolved while importing every module of MODULES, as the URLs of the importing module and of
 * the module it resolved, recorded by a module resolve hook in one node process of their own (one process for
 * all: each import statement of a module is resolved when that module loads, whichever module imported it
 * first, so the modules one list reaches are those reached from it through these edges). A module that runs
 * only in a worker thread is imported last and may throw once loaded: its imports were all resolved before
 * it ran.
 */
async function resolvedEdges(): Promise<Map<string, string[]>> {
  const home = tempHome();
  try {
    const log = join(home.dir, "resolved.txt");
    home.write("resolved.txt", "");
    home.write(
      "hook.mjs",
      `import { appendFileSync } from "node:fs";
let log;
export function initialize(data) { log = data; }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(log, (context.parentURL ?? "") + "\\t" + resolved.url + "\\n");
  return resolved;
}`,
    );
    home.write(
      "register.mjs",
      `import { register } from "node:module";
register(${JSON.stringify(pathToFileURL(join(home.dir, "hook.mjs")).href)}, { data: ${JSON.stringify(log)} });`,
    );
    const ordered = [...MODULES].sort(([, a], [, b]) => Number(a) - Number(b));
    const imports = ordered
      .map(
        ([m, outsideWorker]) =>
          `await import(${JSON.stringify(moduleUrl(m))})${outsideWorker ? ".catch(() => {})" : ""};`,
      )
      .join("\n");
    await promisify(execFile)(
      process.execPath,
      [...CLI_NODE_ARGS, "--import", join(home.dir, "register.mjs"), "--input-type=module", "-e", imports],
      { cwd: join(import.meta.dirname, "../../..") },
    );
    const edges = new Map<string, string[]>();
    for (const line of readFileSync(log, "utf8").split("\n")) {
      const [parent, url] = line.split("\t");
      if (parent === undefined || url === undefined) continue;
      edges.set(parent, [...(edges.get(parent) ?? []), url]);
    }
    return edges;
  } finally {
    home.cleanup();
  }
}

let edges: Promise<Map<string, string[]>> | undefined;

/** The URLs that importing `modules` (each one of MODULES) resolves, themselves included. */
async function resolvedUrls(modules: readonly string[]): Promise<string[]> {
  const unknown = modules.filter((m) => !MODULES.has(m));
  if (unknown.length > 0) throw new Error(`add ${unknown.join(", ")} to MODULES`);
  edges ??= resolvedEdges();
  const graph = await edges;
  const seen = new Set(modules.map(moduleUrl));
  const queue = [...seen];
  for (let url = queue.pop(); url !== undefined; url = queue.pop())
    for (const next of graph.get(url) ?? [])
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
  return [...seen];
}

/** The packages (of `heavy`) that importing `modules` resolves (see `resolvedEdges`). */
async function heavyResolved(modules: readonly string[], heavy = HEAVY): Promise<string[]> {
  const packages = (await resolvedUrls(modules))
    .map((url) => heavy.exec(url)?.[1])
    .filter((name): name is string => name !== undefined);
  return [...new Set(packages)].sort();
}

describe.concurrent("start-up loads no heavy dependency it does not use", () => {
  it("the command groups and the gateway resolve none of the AI SDK, BullMQ, ioredis, nodemailer, undici, execa, cron-parser, luxon, re2js, Ajv", async () => {
    expect(
      await heavyResolved([
        "cli/gateway",
        "cli/mcp",
        "cli/webhook",
        "cli/config",
        "cli/cron",
        "gateway/index",
      ]),
    ).toEqual([]);
  }, 30_000);

  it("the gateway and every group but mcp resolve no OAuth client (oauth4webapi) until a server with auth: oauth connects", async () => {
    const oauth = /\/node_modules\/(oauth4webapi)\//;
    expect(
      await heavyResolved(["cli/gateway", "cli/webhook", "cli/config", "cli/cron", "gateway/index"], oauth),
    ).toEqual([]);
    // The same hook sees it where the provider is loaded.
    expect(await heavyResolved(["actors/oauth/provider"], oauth)).toEqual(["oauth4webapi"]);
  }, 30_000);

  it("the gateway and every group but mcp resolve neither the MCP SDK's client nor its validator until a server connects", async () => {
    const client = /\/node_modules\/(ajv-formats|@modelcontextprotocol\/sdk\/dist\/esm\/client\/index\.js)/;
    expect(
      await heavyResolved(["cli/gateway", "cli/webhook", "cli/config", "cli/cron", "gateway/index"], client),
    ).toEqual([]);
    // The same hook sees them where the session is loaded.
    expect(await heavyResolved(["io/mcp/session"], client)).toEqual([
      "@modelcontextprotocol/sdk/dist/esm/client/index.js",
      "ajv-formats",
    ]);
  }, 30_000);

  it("`svc config check` resolves none of the MCP SDK (its message schemas, its transports) when it renders a server's entry", async () => {
    const sdk = /\/node_modules\/(@modelcontextprotocol\/sdk)\//;
    expect(await heavyResolved(["cli/config/check"], sdk)).toEqual([]);
    // The same hook sees it where the schema cache is loaded.
    expect(await heavyResolved(["io/mcp/session"], sdk)).toEqual(["@modelcontextprotocol/sdk"]);
  }, 30_000);

  it("the gateway and every group but mcp resolve none of the MCP SDK's client transports (nor their OAuth client) until a server connects", async () => {
    const transports =
      /\/node_modules\/@modelcontextprotocol\/sdk\/dist\/esm\/(client\/(?:sse|streamableHttp|stdio|auth)\.js)/;
    expect(
      await heavyResolved(
        ["cli/gateway", "cli/webhook", "cli/config", "cli/cron", "gateway/index"],
        transports,
      ),
    ).toEqual([]);
    // The same hook sees them where a connect loads them.
    expect(await heavyResolved(["io/mcp/transport"], transports)).toEqual([
      "client/auth.js",
      "client/sse.js",
      "client/stdio.js",
      "client/streamableHttp.js",
    ]);
  }, 30_000);

  it("the hook sees them where they are used: the model runner and the Redis state", async () => {
    expect(await heavyResolved(["agent/modelRunner", "state/redisState"])).toEqual(
      expect.arrayContaining(["ai", "bullmq", "ioredis"]),
    );
  }, 30_000);

  it("an ingress thread loads none of the pipeline (its schemas, operators and regex engine): zod, rxjs, re2js", async () => {
    const pipelineOnly = /\/node_modules\/(zod|rxjs|re2js)\//;
    expect(await heavyResolved(["io/http/uwsThread"], pipelineOnly)).toEqual([]);
    // The same hook sees them where the pipeline is loaded (re2js only at its first regex filter).
    expect(await heavyResolved(["streams/pipeline"], pipelineOnly)).toEqual(["rxjs", "zod"]);
  }, 30_000);
});
