import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { addServers, removeServer } from "../../../src/io/mcpServersEdit.js";
import { addServerToConfig } from "../../../src/io/oauth/installWriter.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home.cleanup());

const HEAD = "platforms:\n  webhook:\n    enabled: false\n";
const BLOCK = "mcp_servers:\n  b:\n    command: node\n    args:\n      - x\n";

describe("svc mcp add / install into an empty or null mcp_servers", () => {
  it("mcp_servers: {} (as svc mcp remove leaves it) gets the server in block style", () => {
    home = tempHome();
    const config = home.write("config.yaml", `${HEAD}mcp_servers:\n  a:\n    command: node\n`);
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(`${HEAD}mcp_servers: {}\n`);
    addServers(config, { b: { command: "node", args: ["x"] } }, { doing: "add" });
    expect(readFileSync(config, "utf8")).toBe(`${HEAD}${BLOCK}`);
    home.write("config.yaml", `${HEAD}mcp_servers: {}\n`);
    addServerToConfig(config, "b", { command: "node", args: ["x"] });
    expect(readFileSync(config, "utf8")).toBe(`${HEAD}${BLOCK}`);
  });

  it("removing the last server keeps a comment under it once", () => {
    home = tempHome();
    const tail = "  # more servers later\nagent:\n  provider: echo\n";
    const config = home.write("config.yaml", `${HEAD}mcp_servers:\n  a:\n    command: node\n${tail}`);
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(`${HEAD}mcp_servers: {}\n${tail}`);
    // A comment on the mapping's own line stays there.
    home.write("config.yaml", `${HEAD}mcp_servers: {a: {command: node}}  # flow\n`);
    expect(removeServer(config, "a")).toBe(true);
    expect(readFileSync(config, "utf8")).toBe(`${HEAD}mcp_servers: {} # flow\n`);
  });

  it("a comment on mcp_servers: ~ stays; a flow mapping with servers keeps its style", () => {
    home = tempHome();
    const config = home.write("config.yaml", `${HEAD}mcp_servers: ~ # servers go here\n`);
    addServers(config, { b: { command: "node", args: ["x"] } }, { doing: "add" });
    expect(readFileSync(config, "utf8")).toBe(
      `${HEAD}mcp_servers:\n  # servers go here\n  b:\n    command: node\n    args:\n      - x\n`,
    );
    // A comment on the lines under an empty mcp_servers: is written once, not once in the map and again below it.
    for (const below of ["# none yet\n", "\n# none yet\n", "  # none yet\n"]) {
      home.write("config.yaml", `${HEAD}mcp_servers:\n${below}`);
      addServers(config, { b: { command: "node", args: ["x"] } }, { doing: "add" });
      expect(readFileSync(config, "utf8")).toBe(
        `${HEAD}mcp_servers:\n  # none yet\n  b:\n    command: node\n    args:\n      - x\n`,
      );
      home.write("config.yaml", `${HEAD}mcp_servers:\n${below}`);
      addServerToConfig(config, "b", { command: "node", args: ["x"] });
      expect(readFileSync(config, "utf8").match(/# none yet/g)).toHaveLength(1);
    }
    home.write("config.yaml", `${HEAD}mcp_servers: {}  # none yet\n`);
    addServers(config, { b: { command: "node", args: ["x"] } }, { doing: "add" });
    expect(readFileSync(config, "utf8")).toBe(
      `${HEAD}mcp_servers:\n  # none yet\n  b:\n    command: node\n    args:\n      - x\n`,
    );
    home.write("config.yaml", `${HEAD}mcp_servers: {a: {command: node}}\n`);
    addServers(join(home.dir, "config.yaml"), { b: { command: "node" } }, { doing: "add" });
    expect(readFileSync(config, "utf8")).toBe(
      `${HEAD}mcp_servers: { a: { command: node }, b: { command: node } }\n`,
    );
  });
});
