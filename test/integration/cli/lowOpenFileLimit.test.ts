import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { execa } from "execa";
import { afterEach, describe, expect, it } from "vitest";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let home: TempHome;
afterEach(() => home?.cleanup());

/** `svc gateway run --port 0` under `ulimit -n <limit>` (soft and hard: Node raises the soft one to the hard one). */
function gatewayUnder(limit: number) {
  return execa(
    "bash",
    [
      "-c",
      `ulimit -n ${limit} && exec "$@"`,
      "bash",
      process.execPath,
      ...SVC_ARGV,
      "gateway",
      "run",
      "--port",
      "0",
    ],
    {
      cwd: resolve(import.meta.dirname, "../../.."),
      env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
      extendEnv: false,
      reject: false,
      timeout: 20_000,
    },
  );
}

describe("svc gateway run under a limit on open files too low for it", () => {
  it("exits 1 at once saying the limit, the number it needs and how to raise it (not 'EMFILE: … open chunk-….js')", async () => {
    home = tempHome();
    const { exitCode, stdout, stderr } = await gatewayUnder(64);
    expect({ exitCode, stdout }).toEqual({ exitCode: 1, stdout: "" });
    expect(stderr).toBe(
      "svc: the open-file limit (ulimit -n) is 64, below the 128 the gateway needs to start and serve a few connections — raise it to 128 or more, well above the connections and MCP servers it serves (ulimit -n 65536 in the shell that starts it; LimitNOFILE= in a systemd unit, docker run --ulimit nofile=...)",
    );
  }, 30_000);

  it("starts and listens at the limit it names (128)", async () => {
    home = tempHome();
    const child = spawn(
      "bash",
      [
        "-c",
        'ulimit -n 128 && exec "$@"',
        "bash",
        process.execPath,
        ...SVC_ARGV,
        "gateway",
        "run",
        "--port",
        "0",
      ],
      {
        env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    const exited = new Promise<number | null>((done) => child.on("exit", done));
    const listening = await new Promise<boolean>((done) => {
      child.stdout.on("data", (d) => {
        out += d;
        if (/Listening on 127\.0\.0\.1:\d+/.test(out)) done(true);
      });
      child.stderr.on("data", (d) => (out += d));
      void exited.then(() => done(false));
    });
    child.kill("SIGTERM");
    await exited;
    expect({ listening, out: listening ? "" : out }).toEqual({ listening: true, out: "" });
  }, 30_000);
});
