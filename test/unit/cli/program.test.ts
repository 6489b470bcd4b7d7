import { describe, expect, it } from "vitest";
import { buildProgram } from "../../../src/cli/program.js";

const groupsFor = async (...args: string[]) =>
  (await buildProgram(["node", "svc", ...args])).commands.map((command) => command.name());

describe("svc loads only the command group it runs", () => {
  it("a group's command registers that group alone (svc webhook list never loads the gateway)", async () => {
    expect(await groupsFor("webhook", "list")).toEqual(["webhook"]);
    expect(await groupsFor("cron", "list")).toEqual(["cron"]);
    expect(await groupsFor("mcp", "list")).toEqual(["mcp"]);
    expect(await groupsFor("gateway", "status")).toEqual(["gateway"]);
  });

  it("help, no command and an unknown command see every group, in help order; --version none", async () => {
    const all = ["gateway", "webhook", "cron", "mcp", "config"];
    expect(await groupsFor()).toEqual(all);
    expect(await groupsFor("--help")).toEqual(all);
    expect(await groupsFor("help", "webhook")).toEqual(all);
    expect(await groupsFor("webhok")).toEqual(all);
    expect(await groupsFor("constructor")).toEqual(all);
    expect(await groupsFor("--version")).toEqual([]);
  });
});

describe("svc --help of every command", () => {
  it('states each default as the other options do, "(default 10)", never commander\'s quoted "(default: "10")"', async () => {
    const program = await buildProgram(["node", "svc", "--help"]);
    const quoted: string[] = [];
    const visit = (command: (typeof program.commands)[number], path: string) => {
      for (const line of command.helpInformation().split("\n"))
        if (line.includes('(default: "')) quoted.push(`${path}: ${line.trim()}`);
      for (const sub of command.commands) visit(sub, `${path} ${sub.name()}`);
    };
    visit(program, "svc");
    expect(quoted).toEqual([]);
  });
});
