import type { ToolsSettings } from "../../config/sections/tools.js";
import { runCappedProcess } from "../../io/cappedProcess.js";
import { minimalEnv } from "../../io/process.js";
import { type ProcessGroups, toolGroupNote } from "../../io/processGroups.js";
import { argsObject, stringArg, textOutcome, toolError, workspaceOf } from "./outcome.js";
import type { AgentTool } from "./tool.js";

export interface TerminalDeps {
  /** Where PATH, LANG and TMPDIR come from (never svc's secrets); default: the process environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where each command's process group is noted while it runs (the gateway's, `svc cron run`'s). */
  readonly groups?: ProcessGroups;
}

function section(name: string, output: { text: string; dropped: number }): string {
  if (output.text === "" && output.dropped === 0) return "";
  const cut = output.dropped > 0 ? `\n[${output.dropped} more bytes not shown]` : "";
  return `\n--- ${name} ---\n${output.text}${cut}`;
}

/**
 * `terminal`: one command through `bash -c`, in the run's workspace. The command text is the model's,
 * passed as one argument to bash (svc builds no shell string), with a minimal environment whose HOME is
 * the workspace, a timeout and an output cap (docs/agent-tools.md).
 */
export function terminalTool(settings: ToolsSettings["terminal"], deps: TerminalDeps = {}): AgentTool {
  return {
    name: "terminal",
    description:
      "Run a shell command (bash -c) in this run's private working directory and return its exit code, " +
      `stdout and stderr. Times out after ${settings.timeout_seconds} s; output is cut at ` +
      `${settings.max_output_bytes} bytes per stream. No stdin; nothing persists after the run but files.`,
    inputSchema: {
      type: "object",
      properties: { command: { type: "string", description: "The command line, run by bash -c" } },
      required: ["command"],
      additionalProperties: false,
    },
    async execute(args, context) {
      const object = argsObject(args);
      if (typeof object === "string") return toolError(object);
      const command = stringArg(object, "command");
      if (typeof command !== "string") return toolError(command.error);
      if (command.includes("\0")) return toolError("the command contains a NUL character");
      const cwd = await workspaceOf(context);
      if (typeof cwd !== "string") return toolError(`terminal: ${cwd.error}`);
      const result = await runCappedProcess({
        file: "bash",
        args: ["-c", command],
        cwd,
        env: { ...minimalEnv(deps.env ?? process.env), HOME: cwd, PWD: cwd },
        timeoutMs: settings.timeout_seconds * 1000,
        maxOutputBytes: settings.max_output_bytes,
        signal: context.signal,
        ...(deps.groups === undefined ? {} : { group: toolGroupNote(deps.groups, "tool:terminal") }),
      });
      const output = section("stdout", result.stdout) + section("stderr", result.stderr);
      if (result.startCode === "E2BIG")
        // The system's own message would quote the whole command back.
        return toolError(
          `terminal: the command is ${Buffer.byteLength(command)} bytes, more than the system lets one argument (bash -c) have (E2BIG) — ` +
            "write a long script to a file in parts (cat >> script.sh <<'EOF' … EOF, one call each) and run it with bash script.sh",
        );
      if (result.startError !== undefined)
        return toolError(`terminal: could not start bash: ${result.startError}`);
      if (result.timedOut)
        return toolError(`terminal: timed out after ${settings.timeout_seconds} s${output}`);
      if (result.canceled) return toolError("terminal: canceled: the run ended");
      const status =
        result.exitCode !== undefined
          ? `exit code ${result.exitCode}`
          : `killed by ${result.signal ?? "a signal"}`;
      return textOutcome(`${status}${output}`);
    },
  };
}
