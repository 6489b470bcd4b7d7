import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { bundledFixture } from "../../helpers/bundledFixture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { freePort } from "../../helpers/http.js";
import { alive } from "../../helpers/process.js";
import { type SvcResult, svc, svcEach } from "./svc.js";

const SERVER = await bundledFixture(join(import.meta.dirname, "../../fixtures/mcp/stdio-server.mjs"));

let home: TempHome;
afterEach(() => home.cleanup());

async function writeServers(extra: Record<string, unknown> = {}): Promise<void> {
  const port = await freePort();
  home.write(
    "config.yaml",
    stringify({
      mcp_servers: {
        fx: { command: process.execPath, args: [SERVER] },
        missing: { command: "no-such-command-svc-test" },
        refused: { url: `http://127.0.0.1:${port}/mcp` },
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
        unset: { url: "https://example.test/mcp", headers: { Authorization: "Bearer ${NOPE_TOKEN}" } },
        off: { command: "x", enabled: false },
        ...extra,
      },
    }),
  );
}

describe("is my MCP server working? (no gateway running)", { timeout: 90_000 }, () => {
  it("with no server configured, each view says where it looked and how to add one: a config.yaml that is not there is named so", async () => {
    home = tempHome();
    const config = join(home.dir, "config.yaml");
    // The checked view, the configuration-only view and `test --all` say the same line.
    const everyViewSays = async (stdout: string) => {
      for (const args of [
        ["mcp", "list"],
        ["mcp", "list", "--no-check"],
        ["mcp", "test", "--all"],
      ])
        expect(await svc(home, args), args.join(" ")).toMatchObject({ code: 0, stdout });
    };
    await everyViewSays(
      `No MCP servers: there is no ${config} (svc mcp add <name> -- <command> creates it with the server).\n`,
    );
    home.write("config.yaml", "mcp_servers: {}\n");
    await everyViewSays(`No MCP servers in ${config} (add one: svc mcp add <name> -- <command>).\n`);
  });

  it("with an SVC_HOME that cannot hold config.yaml (a file in its place), says so instead of svc mcp add, which would fail too", async () => {
    home = tempHome();
    const file = home.write("svc-home", "");
    const config = join(file, "config.yaml");
    const problem = `${file}: SVC_HOME is a file, not a directory — set SVC_HOME to a directory`;
    const env = { SVC_HOME: file };
    for (const args of [
      ["mcp", "list"],
      ["mcp", "test", "--all"],
    ])
      expect(await svc(home, args, { env }), args.join(" ")).toMatchObject({
        stdout: `No MCP servers: there is no ${config}, and ${problem}\n`,
      });
    expect((await svc(home, ["mcp", "tools", "x"], { env })).stderr).toContain(
      `no MCP server named "x": there is no ${config}, and ${problem}`,
    );
  });

  it("svc mcp list checks each enabled server: ok (N tools) or failed: why", async () => {
    home = tempHome();
    // The server that never answers is checked in the test below, at its --timeout: here the command ends
    // once every server has its answer. 10 s, not less, for them to have it: fx (a Node process loading the
    // SDK) its tools, refused its ECONNREFUSED; on a loaded machine 3 s once ran out before refused's
    // connect had failed.
    await writeServers();
    const res = await svc(home, ["mcp", "list", "--timeout", "10"]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^fx\s+stdio\s+ok \(12 tools\)$/m);
    expect(res.stdout).toMatch(/^missing\s+stdio\s+failed: command not found: no-such-command-svc-test/m);
    expect(res.stdout).toMatch(/^refused\s+http\s+failed: .*(ECONNREFUSED|refused)/m);
    expect(res.stdout).toMatch(
      /^unset\s+http\s+failed: \$\{NOPE_TOKEN\} is not set — add NOPE_TOKEN=\.\.\./m,
    );
    expect(res.stdout).toMatch(/^off\s+stdio\s+skipped \(enabled: false\)$/m);
  });

  it("a server given up at --timeout or connect_timeout is killed at once, not after the stop's SIGTERM grace (the command ends on time)", async () => {
    home = tempHome();
    // Never answers, ignores SIGTERM, and notes what reaches it: a graceful stop closes stdin, sends
    // SIGTERM 2 s later and SIGKILL 2 s after that, so the command ended 4 s after its --timeout. Its pid
    // is written once its SIGTERM handler is set, in a file of its own.
    const stubborn = (dir: string) => {
      const record = join(dir, "signals.log");
      const pidFile = join(dir, "server.pid");
      const script = `const { appendFileSync, writeFileSync } = require("node:fs");
      const note = (what) => appendFileSync(${JSON.stringify(record)}, what + "\\n");
      process.on("SIGTERM", () => note("SIGTERM"));
      writeFileSync(${JSON.stringify(pidFile)}, String(process.pid));
      process.stdin.on("end", () => note("stdin closed"));
      process.stdin.resume();
      setInterval(() => {}, 1000);`;
      return { command: process.execPath, args: ["-e", script] };
    };
    // A server that prints why it waits (a login URL) and never answers the handshake; it makes a file once
    // it has written on stderr.
    const waitsWrote = join(home.dir, "waits-wrote");
    const waits = {
      command: process.execPath,
      args: [
        "-e",
        `process.stderr.write("Please authorize: https://auth.example/x\\n"); require("node:fs").writeFileSync(${JSON.stringify(waitsWrote)}, ""); process.stdin.resume()`,
      ],
    };
    const pidIn = (dir: string) => {
      const text = existsSync(join(dir, "server.pid")) ? readFileSync(join(dir, "server.pid"), "utf8") : "";
      return /^\d+$/.test(text) ? Number(text) : undefined;
    };
    /**
     * Runs the command with its timers on a fake clock (it runs in this worker): the 3 s it gives the
     * servers (--timeout, connect_timeout) pass only once each has started and is ready to be given up (the
     * stubborn one's SIGTERM handler set, the other's stderr written), however slow the machine; then at once,
     * and from then on 100 ms every 20 ms until the command has ended.
     */
    const givenUp = async (run: () => Promise<SvcResult>, ready: () => boolean) => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
      try {
        const result = run();
        await vi.waitFor(() => expect(ready()).toBe(true), { timeout: 30_000, interval: 20 });
        // What a server wrote before it said it was ready is read by this worker before the timeout's turn.
        await new Promise((resolve) => setImmediate(resolve));
        vi.advanceTimersByTime(3000);
        // Then the clock goes on while the command runs, as it would: a graceful stop's 2 s graces pass too.
        let ended = false;
        void result.finally(() => {
          ended = true;
        });
        await vi.waitFor(
          () => {
            if (ended) return;
            vi.advanceTimersByTime(100);
            throw new Error("the command is still running");
          },
          { timeout: 30_000, interval: 20 },
        );
        return await result;
      } finally {
        vi.useRealTimers();
      }
    };
    const gone = async (dir: string) => {
      const record = join(dir, "signals.log");
      const pid = pidIn(dir) as number;
      // The group got SIGKILL before the command exited; the kernel ends it at once.
      await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 5_000 });
      const notes = existsSync(record) ? readFileSync(record, "utf8").trim().split("\n") : [];
      return notes.filter((note) => note === "SIGTERM");
    };
    // The three commands one after another, each in a home of its own and in this worker.
    // The list also checks a server that prints why it waits (a login URL) and never answers: what it
    // wrote on stderr while it kept svc waiting is usually why, and the list says it.
    home.write("config.yaml", stringify({ mcp_servers: { stubborn: stubborn(home.dir), waits } }));
    const others = ["test", "tools"].map((command) => {
      const own = tempHome();
      own.write(
        "config.yaml",
        stringify({ mcp_servers: { stubborn: { ...stubborn(own.dir), connect_timeout: 3 } } }),
      );
      return { command, own };
    });
    try {
      const list = await givenUp(
        () => svc(home, ["mcp", "list", "--timeout", "3"]),
        () => pidIn(home.dir) !== undefined && existsSync(waitsWrote),
      );
      expect(list.stdout).toMatch(
        /^stubborn\s+stdio\s+failed: no answer within 3 s \(--timeout\) — the server did not answer the handshake \(initialize, MCP's first request\): check that command and args .* raise --timeout$/m,
      );
      expect(list.stdout).toMatch(
        /^waits\s+stdio\s+failed: no answer within 3 s \(--timeout\) — its stderr so far: Please authorize: https:\/\/auth\.example\/x$/m,
      );
      expect(await gone(home.dir)).toEqual([]);
      for (const { command, own } of others) {
        const res = await givenUp(
          () => svc(own, ["mcp", command, "stubborn"]),
          () => pidIn(own.dir) !== undefined,
        );
        expect(res.code).toBe(1);
        expect(res.stderr).toContain("mcp_servers.stubborn: connect timed out after 3 s (connect_timeout)");
        expect(await gone(own.dir)).toEqual([]);
      }
    } finally {
      for (const { own } of others) own.cleanup();
    }
  });

  it("--no-check keeps the configuration-only view; svc mcp test --all exits 1 when one fails", async () => {
    home = tempHome();
    await writeServers();
    const list = await svc(home, ["mcp", "list", "--no-check"]);
    const all = await svc(home, ["mcp", "test", "--all"]);
    expect(list.stdout).toMatch(/fx\s+stdio\s+stopped\s+0/);
    expect(list.stdout).toContain("no gateway is running");
    expect(all.code).toBe(1);
    expect(all.stdout).toMatch(/^fx\s+stdio\s+ok \(12 tools\)$/m);
    expect((await svc(home, ["mcp", "test"])).code).toBe(2);
    const both = await svc(home, ["mcp", "test", "fx", "--all"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain(
      "svc: a server name and --all exclude each other: svc mcp test fx checks that server, svc mcp test --all every configured one",
    );
  });

  it("svc mcp test --all exits 0 when every enabled server works", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({ mcp_servers: { fx: { command: process.execPath, args: [SERVER] } } }),
    );
    const res = await svc(home, ["mcp", "test", "--all"]);
    expect(res).toMatchObject({ code: 0, stdout: expect.stringMatching(/fx\s+stdio\s+ok \(12 tools\)/) });
  });

  it("an unset variable in a stdio server's args is passed on as written: ok with a warning, as svc mcp test says", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
        mcp_servers: { lit: { command: process.execPath, args: [SERVER, "--x=${NOT_SET_SVC_TEST}"] } },
      }),
    );
    const warning = `\${NOT_SET_SVC_TEST} is not set, so it is passed on as written — add NOT_SET_SVC_TEST=... to ${join(home.dir, ".env")} or the environment if it is meant as a variable`;
    const [all, list, one] = await svcEach(home, [
      ["mcp", "test", "--all"],
      ["mcp", "list"],
      ["mcp", "test", "lit"],
    ]);
    expect(all.code).toBe(0);
    for (const res of [all, list]) expect(res.stdout).toContain(`ok (12 tools) — warning: ${warning}`);
    expect(one.code).toBe(0);
    expect(one.stderr).toContain(`warning: ${warning}`);
  });

  it("an unset variable in a stdio server's headers, which it is never sent, is not said to be passed on", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: {
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own variable syntax
          sh: { command: process.execPath, args: [SERVER], headers: { "X-Key": "${NOT_SET_SVC_HEADER}" } },
        },
      }),
    );
    const res = await svc(home, ["mcp", "test", "sh"]);
    expect(res.code).toBe(0);
    expect(res.stderr).toContain("headers");
    expect(res.stderr).not.toContain("NOT_SET_SVC_HEADER} is not set");
  });
});

describe("svc mcp tools <server>: descriptions and input schemas", { timeout: 60_000 }, () => {
  it("shows descriptions; --schema and --json show each input schema", async () => {
    home = tempHome();
    home.write(
      "config.yaml",
      stringify({
        mcp_servers: { fx: { command: process.execPath, args: [SERVER], tools: { include: ["add"] } } },
      }),
    );
    const plain = await svc(home, ["mcp", "tools", "fx"]);
    const schema = await svc(home, ["mcp", "tools", "fx", "--schema"]);
    const json = await svc(home, ["mcp", "tools", "fx", "--json"]);
    expect(plain.stdout).toMatch(/^REGISTERED NAME\s+SERVER TOOL\s+DESCRIPTION$/m);
    expect(plain.stdout).toMatch(/^mcp__fx__add\s+add/m);
    expect(schema.stdout).toContain(`mcp__fx__add ("add")`);
    expect(schema.stdout).toContain("input schema:");
    expect(schema.stdout).toMatch(/"a": \{\s+"type": "number"/);
    const tools = JSON.parse(json.stdout) as Array<Record<string, unknown>>;
    const add = tools.find((t) => t.tool === "add");
    expect(add).toMatchObject({
      name: "mcp__fx__add",
      input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
    });
  });
});
