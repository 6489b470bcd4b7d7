import { afterEach, beforeEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
beforeEach(() => {
  home = tempHome();
});
afterEach(() => home.cleanup());

/**
 * A server that fails to start is named with its last stderr lines, at most their last 400 characters
 * (docs/mcp.md). An emoji is two UTF-16 units: a cut between them kept its second half alone, which the
 * terminal gets as U+FFFD (`�`).
 */
it("a stderr tail cut at 400 characters right after the first half of an emoji leaves the emoji out whole", {
  timeout: 60_000,
}, async () => {
  const script = `process.stderr.write("😀${"x".repeat(399)}\\n"); process.exit(3)`;
  home.write(
    "config.yaml",
    stringify({ mcp_servers: { fx: { command: process.execPath, args: ["-e", script] } } }),
  );
  const res = await svc(home, ["mcp", "test", "fx"]);
  expect(res.code).toBe(1);
  expect(res.stderr).not.toMatch(/(?<![\ud800-\udbff])[\udc00-\udfff]/);
  expect(res.stderr).toContain(`...${"x".repeat(399)}`);
});

it("a stdout line cut at 1000 characters right inside an emoji, quoted by the connect timeout, leaves the emoji out whole", {
  timeout: 60_000,
}, async () => {
  // A server that writes no MCP message on stdout, only one long line, and never answers.
  const script = `process.stdout.write("${"x".repeat(999)}😀 after the cut\\n"); setInterval(() => {}, 1000)`;
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: { fx: { command: process.execPath, args: ["-e", script], connect_timeout: 2 } },
    }),
  );
  const res = await svc(home, ["mcp", "test", "fx"]);
  expect(res.code).toBe(1);
  expect(res.stderr).toContain("on stdout no MCP message but: ");
  expect(res.stderr).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|\ufffd/);
});
