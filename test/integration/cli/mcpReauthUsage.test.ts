import { afterEach, describe, expect, it } from "vitest";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";

let home: TempHome;
afterEach(() => home.cleanup());

// In-process: both are refused before anything is read or started (a real reauth runs as a process).
const reauth = (...args: string[]) =>
  runInProcess(["mcp", "reauth", ...args], { SVC_HOME: home.dir, PATH: process.env.PATH ?? "" });

describe("svc mcp reauth usage", () => {
  it("a server name with --all says they exclude each other (as svc mcp test does); neither asks for one", async () => {
    home = tempHome();
    home.write("config.yaml", "mcp_servers:\n  o:\n    url: https://127.0.0.1:1/mcp\n    auth: oauth\n");
    const both = await reauth("o", "--all");
    expect(both.code).toBe(2);
    expect(both.stderr).toBe(
      "svc: a server name and --all exclude each other: svc mcp reauth o re-authorizes that server, svc mcp reauth --all every enabled auth: oauth one\n",
    );
    const neither = await reauth();
    expect(neither.code).toBe(2);
    expect(neither.stderr).toBe("svc: give one server name or --all\n");
  });
});
