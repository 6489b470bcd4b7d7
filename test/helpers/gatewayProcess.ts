import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { CLI_NODE_ARGS, svcModule } from "./cliEntry.js";

/** The fixture that starts a gateway of `<dir>` with the given stall settings and prints `PORT <n>`. */
const GATEWAY_NODE = join(import.meta.dirname, "../fixtures/redis/gatewayNode.mjs");

/**
 * Starts `test/fixtures/redis/gatewayNode.mjs` on the home `dir` (its `config.yaml` written already) in a
 * process group of its own, so a test can SIGKILL it and nothing else; resolves with its port once it
 * listens, rejects when it exits first. `children` collects it for the file's cleanup; `nodeArgs` go before
 * the fixture (a preload), `env` is added to a bare environment.
 */
export function startGatewayProcess(options: {
  readonly dir: string;
  readonly stall: Record<string, number>;
  readonly children: ChildProcess[];
  readonly nodeArgs?: readonly string[];
  readonly env?: Record<string, string>;
}): Promise<{ child: ChildProcess; port: number }> {
  const { dir } = options;
  const child = spawn(
    process.execPath,
    [
      ...CLI_NODE_ARGS,
      ...(options.nodeArgs ?? []),
      GATEWAY_NODE,
      dir,
      JSON.stringify(options.stall),
      svcModule("gateway/index.js"),
      svcModule("io/log.js"),
    ],
    {
      cwd: join(import.meta.dirname, "../.."),
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  options.children.push(child);
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const port = /PORT (\d+)/.exec(out);
      if (port !== null) resolve({ child, port: Number(port[1]) });
    });
    child.once("exit", (code) => reject(new Error(`gateway of ${dir} exited (${code}): ${err}`)));
  });
}
