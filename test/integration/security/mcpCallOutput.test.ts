import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "../cli/svc.js";

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

let home: TempHome;
afterEach(() => home.cleanup());

/**
 * A tool's text is the server's, often quoting what it fetched or read (a web page, an issue body): printed
 * raw, `\u001b]52;c;…\u0007` would set the clipboard, `\u001b]0;…` retitle the window, `\u001b[2K\r` erase
 * the line and fake other output. It is shown as every remote party's text is; line breaks and tabs stay,
 * a CRLF is a line break, and `--json` gives the text as the server sent it.
 */
it("svc mcp call shows a tool's text with its escape sequences as \\u001b, lines and tabs kept", async () => {
  home = tempHome();
  home.write(
    "config.yaml",
    stringify({ mcp_servers: { f: { command: process.execPath, args: [SERVER] } } }),
    0o600,
  );
  const text = "first\tline\r\nsecond \u001b]52;c;cHduZWQ=\u0007\u001b[2K\rFAKE\u009b31m\u202eend";
  const args = JSON.stringify({ text });
  const shown = await svc(home, ["mcp", "call", "f", "echo", "--args", args]);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toBe(
    "first\tline\nsecond \\u001b]52;c;cHduZWQ=\\u0007\\u001b[2K\\u000dFAKE\\u009b31m\\u202eend\n",
  );
  const json = await svc(home, ["mcp", "call", "f", "echo", "--args", args, "--json"]);
  expect(json.code).toBe(0);
  expect((JSON.parse(json.stdout) as { content: Array<{ text: string }> }).content[0]?.text).toBe(text);
}, 30_000);
