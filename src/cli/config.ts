import type { Command } from "commander";
import { caFileProblems, caFileWarning } from "../io/mcp/caFileProblems.js";
import { proxyNotice } from "../io/outbound/proxyChoice.js";
import { terminalText } from "../io/terminalText.js";
import { checkConfig } from "./config/check.js";

/** `svc config check`: the whole configuration validated, nothing started; exit 1 on problems. */
export function registerConfigCommands(program: Command): void {
  const config = program.command("config").description("check the configuration");
  config
    .command("check")
    .description("validate config.yaml, .env and the subscription store without starting anything")
    .action(async () => {
      const report = await checkConfig();
      // A record written by hand or by another tool may hold any text: shown as text, never acted on.
      for (const warning of report.warnings) process.stderr.write(`Warning: ${terminalText(warning)}\n`);
      // Read from the process environment, as the gateway reads it; never with the proxy's credentials.
      const proxy = proxyNotice();
      if (proxy?.level === "error") process.stderr.write(`Warning: ${proxy.text}\n`);
      else if (proxy !== undefined) process.stdout.write(`${proxy.text}\n`);
      for (const problem of caFileProblems()) process.stderr.write(`Warning: ${caFileWarning(problem)}\n`);
      const problems = [...report.problems, ...report.storeProblems];
      if (problems.length > 0) {
        process.stderr.write(`${terminalText(problems.join("\n"))}\n`);
        process.stdout.write(
          `${problems.length} problem${problems.length === 1 ? "" : "s"}: ${
            report.problems.length > 0
              ? "the gateway would not start"
              : "the gateway would start, but serve none of the subscriptions until the store is fixed"
          }\n`,
        );
        process.exitCode = 1;
        return;
      }
      process.stdout.write(`ok: ${report.summary}\n`);
    });
}
