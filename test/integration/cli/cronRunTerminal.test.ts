import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SVC_ARGV } from "../../helpers/cliEntry.js";
import { RECORDER_AGENT, recorderAgent } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { runOnTerminal } from "../../helpers/pty.js";
import { cliConfig, svc } from "./svc.js";

let home: TempHome;
afterEach(() => home.cleanup());

/** A reply that clears the screen, retitles the window and reverses the text after it, if a terminal acts on it. */
const HOSTILE = "done\u001b[2J\u001b]0;pwned\u0007 \u202eexe.txt";

/**
 * `svc cron run` printed the agent's reply raw: a reply quoting a web page or an issue body could clear the
 * screen, retitle the window or reorder text, where every other output that shows text svc did not write
 * escapes it. On a terminal it is now shown as that text is; into a pipe or a file it stays the reply itself.
 */
describe("svc cron run prints the agent's reply", { timeout: 90_000 }, () => {
  it("on a terminal with its control and bidi characters escaped; into a pipe as it is", async () => {
    home = tempHome();
    home.write("agent/recorder.sh", RECORDER_AGENT, 0o755);
    home.write("config.yaml", stringify(cliConfig({}, { agent: recorderAgent(HOSTILE) })));
    const created = await svc(home, [
      "cron",
      "create",
      "--name",
      "digest",
      "--schedule",
      "1h",
      "--prompt",
      "p",
    ]);
    expect(created.code).toBe(0);
    const shown = await runOnTerminal(
      [process.execPath, ...SVC_ARGV, "cron", "run", "digest"],
      { PATH: process.env.PATH ?? "", HOME: home.dir, SVC_HOME: home.dir, TERM: "dumb" },
      [],
    );
    expect(shown.code).toBe(0);
    expect(shown.screen).toBe("done\\u001b[2J\\u001b]0;pwned\\u0007 \\u202eexe.txt\r\n");
    const piped = await svc(home, ["cron", "run", "digest"]);
    expect(piped.stdout).toBe(`${HOSTILE}\n`);
  });
});
