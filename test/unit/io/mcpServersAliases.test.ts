import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/load.js";
import { addServers, removeServer } from "../../../src/io/mcpServersEdit.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

// One entry's settings shared with YAML anchors, as a file with several similar servers writes them.
const SHARED = [
  "mcp_servers:",
  "  a: &base",
  "    command: node",
  "    args: &ar [x]",
  "  b: *base",
  "  c:",
  "    <<: *base",
  "    args: [y]",
  "  e: { command: n, args: *ar }",
  "",
].join("\n");

const servers = () =>
  Object.fromEntries(
    Object.entries(loadConfig({ home: home.dir, env: {} }).config.mcp_servers).map(([name, e]) => [
      name,
      [e.command, ...(e.args ?? [])],
    ]),
  );

describe("svc mcp remove / add --force of an entry whose anchors other entries use", () => {
  it("remove: the first alias takes the anchored settings, so every other entry keeps its own", () => {
    home = tempHome();
    const config = home.write("config.yaml", SHARED);
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(
      [
        "mcp_servers:",
        "  b: &base",
        "    command: node",
        "    args: &ar [ x ]",
        "  c:",
        "    <<: *base",
        "    args: [ y ]",
        "  e: { command: n, args: *ar }",
        "",
      ].join("\n"),
    );
    expect(servers()).toEqual({ b: ["node", "x"], c: ["node", "y"], e: ["n", "x"] });
  });

  it("add --force (import --force) replacing it: the others keep theirs too", () => {
    home = tempHome();
    const config = home.write("config.yaml", SHARED);
    addServers(config, { a: { command: "deno" } }, { doing: "add", replace: true });
    expect(servers()).toEqual({ a: ["deno"], b: ["node", "x"], c: ["node", "y"], e: ["n", "x"] });
  });
});
