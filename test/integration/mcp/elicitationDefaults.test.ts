import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runInProcess } from "../../helpers/inProcessCli.js";
import { STDIO_FIXTURE } from "./harness.js";

/**
 * `elicitation.unattended` and `svc mcp call --elicitation`: with no terminal (the test's stdin is a
 * pipe) a form from the real fixture server, sent during the tool call, is answered by the policy.
 */
let home: TempHome;
beforeEach(() => {
  home = tempHome();
  const server = (extra: Record<string, unknown>) => ({
    command: process.execPath,
    args: [STDIO_FIXTURE, "legacy", "--ask-name"],
    ...extra,
  });
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        withdefaults: server({ elicitation: { unattended: "defaults" } }),
        plain: server({}),
      },
    }),
  );
});
afterEach(() => home.cleanup());

/**
 * `svc mcp call` run in this worker (test/helpers/inProcessCli.ts), one at a time: its stdin is no terminal
 * there either, and what it writes and its exit code are collected as a process's would be.
 */
const call = (args: string[]) =>
  runInProcess(["mcp", "call", ...args], {
    PATH: process.env.PATH ?? "",
    HOME: home.dir,
    SVC_HOME: home.dir,
  });

const answer = (stdout: string) => JSON.parse(stdout.trim()) as unknown;

describe("unattended form elicitation during a tool call", () => {
  it("elicitation.unattended: defaults accepts with the form's defaults; the default (decline) declines", async () => {
    const configured = await call(["withdefaults", "ask"]);
    const plain = await call(["plain", "ask"]);
    expect(configured.code, configured.stderr).toBe(0);
    expect(answer(configured.stdout)).toEqual({ action: "accept", content: { color: "blue" } });
    expect(plain.code, plain.stderr).toBe(0);
    expect(answer(plain.stdout)).toEqual({ action: "decline" });
    // Declined with no one asked: stderr says so, and how to answer the form.
    expect(plain.stderr).toContain(
      "svc: elicitation from plain: declined — stdin is not a terminal, so no one could answer the form: run the command in a terminal, or set elicitation.unattended: defaults (svc mcp call --elicitation defaults) to answer it with the form's defaults\n",
    );
    expect(configured.stderr).not.toContain("declined");
  });

  it("--elicitation overrides the server's setting either way", async () => {
    const on = await call(["plain", "ask", "--elicitation", "defaults"]);
    const off = await call(["withdefaults", "ask", "--elicitation", "decline"]);
    expect(answer(on.stdout)).toEqual({ action: "accept", content: { color: "blue" } });
    expect(answer(off.stdout)).toEqual({ action: "decline" });
  });

  it("a required field without a default declines, and stderr names the server and the field", async () => {
    const r = await call(["withdefaults", "ask-name"]);
    expect(answer(r.stdout)).toEqual({ action: "decline" });
    expect(r.stderr).toMatch(
      /elicitation from withdefaults: declined — required fields without a default: name\b/,
    );
    expect(r.stderr).not.toMatch(/\bcolor\b/);
  });

  it("a bad --elicitation value exits 2 naming the values allowed", async () => {
    const r = await call(["plain", "ask", "--elicitation", "yes"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--elicitation: expected decline or defaults, got "yes"');
  });
});
