import { resolve } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

const NAMED_TOOLS = await bundledFixture(
  resolve(import.meta.dirname, "../../fixtures/mcp/named-tools-server.mjs"),
);

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

/**
 * `svc mcp tools` shows a description's first line cut at 100 characters, ending in `…`. An emoji is two
 * UTF-16 units: a cut between them printed half of it, which the terminal gets as U+FFFD (`�`).
 */
it("a description cut right inside an emoji leaves the emoji out whole", { timeout: 60_000 }, async () => {
  const description = `${"d".repeat(98)}😀 and more`;
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        fx: {
          command: process.execPath,
          args: [NAMED_TOOLS, "lookup"],
          env: { TOOL_DESCRIPTION: description },
        },
      },
    }),
  );
  const res = await svc(home, ["mcp", "tools", "fx"]);
  expect(res.code).toBe(0);
  expect(res.stdout).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  expect(res.stdout).toContain(`${"d".repeat(98)}…`);
});
