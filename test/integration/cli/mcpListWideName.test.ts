import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { displayWidth } from "../../../src/cli/format.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

describe("svc mcp list --no-check with a server named in wide characters", { timeout: 60_000 }, () => {
  it("keeps the columns in line as the terminal shows them, as the checked view does", async () => {
    home = tempHome();
    const entry = { command: process.execPath, args: ["server-never-started.mjs"] };
    home.write("config.yaml", stringify({ mcp_servers: { 日本語サーバ: entry, plainserver: entry } }));
    const res = await svc(home, ["mcp", "list", "--no-check"]);
    expect(res.code).toBe(0);
    const lines = res.stdout.split("\n").slice(0, 3);
    // Where the TRANSPORT column starts on each line, in terminal columns.
    const starts = lines.map((line) => displayWidth(line.slice(0, line.search(/(?:TRANSPORT|stdio)/))));
    expect(lines[1]).toContain("日本語サーバ");
    expect(new Set(starts).size).toBe(1);
    for (const line of lines) expect(line).toBe(line.trimEnd());
  });
});
