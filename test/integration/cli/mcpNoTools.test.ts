import { resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { STDIO_FIXTURE } from "../mcp/harness.js";
import { svc as runSvc } from "./svc.js";

const EMPTY_SERVER = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/empty-server.mjs"),
);

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

function svc(args: string[], servers: Record<string, unknown>) {
  home.write("config.yaml", stringify({ mcp_servers: servers }));
  return runSvc(home, args);
}

/** `svc mcp tools` / `test` with nothing registered say why: not always tools.include/exclude. */
describe("svc mcp tools on a server that registers nothing", () => {
  it("a server without the tools capability: says so, and that resources/prompts it lacks cannot register", async () => {
    const servers = {
      empty: { command: process.execPath, args: [EMPTY_SERVER], tools: { resources: true } },
    };
    const tools = await svc(["mcp", "tools", "empty"], servers);
    expect(tools.stdout).toBe(
      "empty: no tools registered (the server declares no tools capability in its initialize answer, so svc does not ask it for tools; tools.resources is on but the server does not offer resources)\n",
    );
    const test = await svc(["mcp", "test", "empty"], servers);
    expect(test.stdout).toContain(
      "0 tools registered (the server declares no tools capability in its initialize answer, so svc does not ask it for tools; tools.resources is on but the server does not offer resources)",
    );
  });

  it("a server that declares tools and lists none: says it lists none", async () => {
    const servers = { empty: { command: process.execPath, args: [EMPTY_SERVER, "--tools-capability"] } };
    const tools = await svc(["mcp", "tools", "empty"], servers);
    expect(tools.stdout).toBe("empty: no tools registered (the server lists no tools)\n");
  });

  it("filters that leave none: says how many tools they left out, and what the server offers", async () => {
    const tools = await svc(["mcp", "tools", "fx"], {
      fx: { command: process.execPath, args: [STDIO_FIXTURE, "legacy"], tools: { include: "nothing*" } },
    });
    expect(tools.stdout).toMatch(
      /^fx: no tools registered \(tools\.include\/exclude left none of its \d+ tools; the server offers resources: tools\.resources: true registers their utility tools; the server offers prompts: tools\.prompts: true registers their utility tools\)\n$/,
    );
  });
});
