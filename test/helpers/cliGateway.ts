import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { TempHome } from "./home.js";

/** The compiled CLI (`npm run build` first: `npm test` does). */
const MAIN = join(import.meta.dirname, "../../dist/cli/main.js");

export interface RunningCli {
  readonly child: ChildProcess;
  readonly port: number;
  readonly exited: Promise<number | null>;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
}

/**
 * `svc gateway run --port 0` in its own process on `home`, resolved once it logs where it listens. The
 * child is pushed to `children` for the test's cleanup.
 */
export function startCliGateway(home: TempHome, children: ChildProcess[]): Promise<RunningCli> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first`);
  const child = spawn(process.execPath, [MAIN, "gateway", "run", "--port", "0"], {
    env: { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir },
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
