import { type ChildProcess, spawn } from "node:child_process";
import { SVC_ARGV } from "./cliEntry.js";
import type { TempHome } from "./home.js";

export interface RunningCli {
  readonly child: ChildProcess;
  readonly port: number;
  readonly exited: Promise<number | null>;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
}

/**
 * `svc gateway run --port 0` in its own process on `home` (the build when it is current, else the source
 * through tsx: `SVC_ARGV`), resolved once it logs where it listens. `env` is added to its environment
 * (`SSL_CERT_FILE`, read once per process). The child is pushed to `children` for the test's cleanup.
 */
export function startCliGateway(
  home: TempHome,
  children: ChildProcess[],
  env: Readonly<Record<string, string>> = {},
): Promise<RunningCli> {
  const child = spawn(process.execPath, [...SVC_ARGV, "gateway", "run", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  let out = "";
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (d) => {
      out += d;
      const match = /Listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (match) resolve({ child, port: Number(match[1]), exited, output: () => out });
    });
    child.stderr?.on("data", (d) => (out += d));
    void exited.then((code) => reject(new Error(`gateway exited ${code}: ${out}`)));
  });
}
