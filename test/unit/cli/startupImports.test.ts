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

/**
 * The URLs of the modules that importing `modules` resolves, recorded by a module resolve hook in a node
 * process of their own. With `outsideWorker`, a module that runs only in a worker thread may throw once
 * loaded: its imports were all resolved before it ran.
 */
async function resolvedUrls(modules: readonly string[], outsideWorker: boolean): Promise<string[]> {
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
  appendFileSync(log, resolved.url + "\\n");
  return resolved;
}`,
    );
    home.write(
      "register.mjs",
      `import { register } from "node:module";
register(${JSON.stringify(pathToFileURL(join(home.dir, "hook.mjs")).href)}, { data: ${JSON.stringify(log)} });`,
    );
    const imports = modules
      .map(
        (m) =>
          `await import(${JSON.stringify(pathToFileURL(join(ROOT, `${m}${EXT}`)).href)})${outsideWorker ? ".catch(() => {})" : ""};`,
      )
      .join("\n");
    await promisify(execFile)(
      process.execPath,
      [...CLI_NODE_ARGS, "--import", join(home.dir, "register.mjs"), "--input-type=module", "-e", imports],
      { cwd: join(import.meta.dirname, "../../..") },
    );
    return readFileSync(log, "utf8").split("\n");
  } finally {
    home.cleanup();
  }
}

/** One process per list of modules: the tests that look for other packages in the same imports share it. */
const resolving = new Map<string, Promise<string[]>>();

/** The packages (of `heavy`) that importing `modules` resolves (see `resolvedUrls`). */
async function heavyResolved(
  modules: readonly string[],
  heavy = HEAVY,
  outsideWorker = false,
): Promise<string[]> {
  const key = JSON.stringify([modules, outsideWorker]);
  const urls = resolving.get(key) ?? resolvedUrls(modules, outsideWorker);
  resolving.set(key, urls);
  const packages = (await urls)
    .map((url) => heavy.exec(url)?.[1])
    .filter((name): name is string => name !== undefined);
  return [...new Set(packages)].sort();
}

// Concurrent: each test waits on node processes of its own (or shared with another, see `resolving`).
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

  it("the hook sees them where they are used: the model runner and the Redis state", async () => {
    expect(await heavyResolved(["agent/modelRunner", "state/redisState"])).toEqual(
      expect.arrayContaining(["ai", "bullmq", "ioredis"]),
    );
  }, 30_000);

  it("an ingress thread loads none of the pipeline (its schemas, operators and regex engine): zod, rxjs, re2js", async () => {
    const pipelineOnly = /\/node_modules\/(zod|rxjs|re2js)\//;
    expect(await heavyResolved(["io/http/uwsThread"], pipelineOnly, true)).toEqual([]);
    // The same hook sees them where the pipeline is loaded (re2js only at its first regex filter).
    expect(await heavyResolved(["streams/pipeline"], pipelineOnly)).toEqual(["rxjs", "zod"]);
  }, 30_000);
});
