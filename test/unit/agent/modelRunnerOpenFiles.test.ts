import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { builtModule } from "../../helpers/cliEntry.js";

// The compiled modules, whatever the suite runs: through tsx the import under test would first need an esbuild
// process, which the child at its limit cannot start, and it would die of that before svc could answer.
const module = (path: string) => JSON.stringify(pathToFileURL(builtModule(path)).href);
const LIMIT =
  "too many open files (EMFILE: this process has as many open as its limit allows) — raise its open-file limit (ulimit -n; LimitNOFILE= in a systemd unit, docker run --ulimit nofile=...)";

let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());

/**
 * A model agent's run in a process at its limit on open files (connections, MCP servers), as the gateway
 * makes it (`preload`: the model runner's module loaded at its start) or not, with a few descriptors free. The module (the AI SDK) was
 * imported at the first run, which could not read it there: `EMFILE: too many open files, open
 * '…/modelRunner….js'`, and Node keeps that failure, so every later run failed the same way.
 */
function runAtLimit(preload: boolean) {
  const script = `
    import { openSync, closeSync } from "node:fs";
    import { createRunner, preloadModelRunner } from ${module("actors/agent/index.js")};
    import { agentSchema } from ${module("config/sections/agent.js")};
    const agent = agentSchema.parse({ provider: "openai", model: "m", base_url: ${JSON.stringify(model.baseUrl)},
      api_key: "k", retries: 0 });
    if (${preload}) await preloadModelRunner(agent);
    const runner = createRunner(agent);
    const request = { route: "r", event: "e", deliveryId: "d", prompt: "p", toolsets: ["no_mcp"], profile: undefined };
    const held = [];
    try { for (;;) held.push(openSync("/dev/null", "r")); } catch {}
    // A few free, as when some connections closed: enough for the model request, not to load the AI SDK.
    for (const fd of held.splice(0, 3)) closeSync(fd);
    const reply = await runner.run(request, new AbortController().signal).then((r) => r.text, (err) => err.message);
    for (const fd of held.splice(0)) closeSync(fd);
    console.log(JSON.stringify(reply));`;
  const node = [process.execPath, "--input-type=module", "-e", script];
  return execa("bash", ["-c", 'ulimit -n 128 && exec "$@"', "bash", ...node], {
    cwd: resolve(import.meta.dirname, "../../.."),
    reject: false,
  }).then(({ stdout, stderr }) => JSON.parse(stdout || JSON.stringify(stderr)) as string);
}

describe("a model agent's run at the limit on open files", () => {
  it("runs when its module was loaded at the start, as the gateway does", async () => {
    model.script({ text: "ran" });
    expect(await runAtLimit(true)).toBe("ran");
  }, 30_000);

  it("not loaded yet (a reload that makes the agent a model's, at the limit): fails naming the limit, its fix and the restart", async () => {
    expect(await runAtLimit(false)).toBe(
      `the model agent could not be loaded: ${LIMIT}; then restart the gateway (a module that failed to load is not loaded again by this process)`,
    );
  }, 30_000);
});
