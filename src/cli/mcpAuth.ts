import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import { makeJob } from "../actors/oauth/context.js";
import { type LoginFlow, runLogin } from "../actors/oauth/runLogin.js";
import { startSystem } from "../actors/system.js";
import { secretScope } from "../config/envFile.js";
import { loadConfig } from "../config/load.js";
import { profileFlag, type SvcPaths, svcHome, svcPaths } from "../config/paths.js";
import { serverEntries } from "../config/serverOrder.js";
import { describeError, SvcError } from "../errors.js";
import { redactCredentials } from "../io/credentials.js";
import {
  describeInstall,
  type InstallRequest,
  installNameProblem,
  parseInstallLink,
} from "../io/installLink.js";
import { renderEntry } from "../io/mcp/render.js";
import { addServerToConfig, existingServerNames } from "../io/oauth/installWriter.js";
import { registerSchemeHandler, XDG_MIME_ARGS } from "../io/oauth/schemeHandler.js";
import { oauthEntryOf } from "../io/oauth/settings.js";
import { newProfileTypo } from "../io/profiles.js";
import { terminalText } from "../io/terminalText.js";
import { cliLogger } from "./cliLogger.js";
import { assertConfigInSight } from "./mcp/configOutOfSight.js";
import { samePrefixNote } from "./mcp/crossServer.js";
import { logoutServer } from "./mcp/logout.js";
import { noOauthServersProblem, oauthTargetProblem } from "./mcp/oauthTarget.js";
import { profilePaths } from "./mcp/profileConfig.js";
import { reloadHint } from "./mcp/reloadHint.js";

/** Questions to the person running the command; `ask` resolves undefined when stdin is closed. */
export interface PromptIO {
  ask(question: string): Promise<string | undefined>;
  print(text: string): void;
}

/**
 * Questions on stderr, answers one line each from stdin: a terminal, or answers piped in by whoever runs
 * the command (`echo y | svc mcp install ...`). One reader serves every question, so piped lines are not
 * lost between them; end of input answers undefined (no).
 */
function stdinIO(): PromptIO & { close(): void } {
  let rl: ReturnType<typeof createInterface> | undefined;
  let lines: AsyncIterator<string> | undefined;
  return {
    async ask(question) {
      process.stderr.write(question);
      rl ??= createInterface({ input: process.stdin, terminal: false });
      lines ??= rl[Symbol.asyncIterator]();
      const next = await lines.next();
      if (next.done !== true) return next.value;
      // No answer whose Enter ended the question's line (Ctrl-D, a closed pipe): what follows starts its own.
      process.stderr.write("\n");
      return undefined;
    },
    print: (text) => process.stdout.write(`${text}\n`),
    close: () => rl?.close(),
  };
}

interface ServerRef {
  readonly name: string;
  readonly entry: () => unknown;
}

/**
 * The enabled `auth: oauth` servers. Each entry is rendered only when its login runs (with the
 * profile's `.env`), so one server's unset `${VAR}` never blocks another's login. Its `headers` are left
 * out: a login sends none of them (they go with MCP requests only), so a header's unset `${VAR}`, which
 * fails a connect closed, does not stop the login.
 */
function oauthServers(paths: SvcPaths): ServerRef[] {
  const load = loadConfig({ home: paths.home });
  const scope = secretScope(paths);
  return serverEntries(load.config.mcp_servers)
    .filter(([, e]) => e.auth === "oauth" && e.enabled)
    .map(([name, entry]) => ({ name, entry: () => renderEntry(name, { ...entry, headers: {} }, scope) }));
}

/** `svc mcp login|reauth <server>` for a server that is no enabled auth: oauth url server: which and why. */
function notAnOauthTarget(paths: SvcPaths, server: string): SvcError {
  assertConfigInSight(paths.config, paths.home);
  const problem =
    oauthTargetProblem(loadConfig({ home: paths.home }).config.mcp_servers, server) ??
    "no enabled server with auth: oauth by that name";
  return new SvcError("usage", `${paths.config}: mcp_servers.${server}: ${problem}`);
}

export interface LoginCommandOptions {
  readonly flow?: LoginFlow;
  readonly profile?: string;
  readonly fresh: boolean;
}

/** Logs in to one server (`svc mcp login`, and each server of `svc mcp reauth`). */
export async function loginServer(
  paths: SvcPaths,
  server: ServerRef,
  options: LoginCommandOptions,
): Promise<void> {
  const logger = cliLogger();
  const entry = oauthEntryOf(server.name, server.entry());
  const job = { ...makeJob(server.name, entry, { paths, logger }), freshClient: options.fresh };
  if (options.fresh) job.store.clearCimdOff();
  const system = startSystem({ logger });
  try {
    await runLogin(job, {
      flow: options.flow ?? entry.oauth?.flow ?? "browser",
      system,
      isTTY: process.stdin.isTTY === true,
    });
  } finally {
    system.shutdown();
  }
}

function pathsFor(profile: string | undefined): SvcPaths {
  return profilePaths(svcHome(), profile);
}

/**
 * `--profile wrok` with a profile `work` on disk: the login would store its tokens in a new profile that no
 * route or cron job uses, and the user would learn it only when `work`'s runs still ask for a login. Said
 * before the login starts (Ctrl-C stops it); any other new profile name is taken as it is.
 */
function warnProfileTypo(paths: SvcPaths, profile: string | undefined, command: string): void {
  const meant = newProfileTypo(paths.home, profile);
  if (meant === undefined) return;
  process.stderr.write(
    `warning: profile ${profile} has no directory (${paths.root} would be new) — did you mean ${meant}? The tokens of this login are stored for profile ${profile}, and only routes and cron jobs bound to ${profile} use them; for ${meant}: ${command}${profileFlag(meant)}\n`,
  );
}

/** Asks for confirmation and a free name; writes nothing unless the answer is yes (closed stdin: no). */
export async function confirmAndInstall(
  configPath: string,
  request: InstallRequest,
  io: PromptIO,
): Promise<string | undefined> {
  io.print(describeInstall(request));
  let name = request.name;
  const taken = existingServerNames(configPath);
  for (let invalid = 0; taken.has(name); ) {
    const answer = (
      await io.ask(`A server named "${name}" already exists. New name (empty to cancel): `)
    )?.trim();
    // A yes/no here answers the confirmation the user expected (`yes | svc mcp install`), not a name.
    if (answer === undefined || answer === "" || /^(y|yes|n|no)$/i.test(answer)) {
      io.print(
        answer === undefined || answer === ""
          ? "Cancelled; nothing was installed."
          : `Cancelled; nothing was installed ("${answer}" answers yes/no; a new name for the server was asked for).`,
      );
      return undefined;
    }
    const problem = installNameProblem(answer);
    if (problem === undefined) name = answer;
    else if (++invalid >= 3) {
      io.print(`Not a valid name: ${problem}. Cancelled after three invalid names; nothing was installed.`);
      return undefined;
    } else io.print(`Not a valid name: ${problem}.`);
  }
  // A free name can still share its tools' prefix with a server's (a.b and a_b): said before the question.
  const shared = samePrefixNote(name, [...taken, name]);
  if (shared !== undefined) io.print(shared);
  const yes = (await io.ask(`Install "${name}" into ${configPath}? [y/N] `))?.trim().toLowerCase();
  if (yes !== "y" && yes !== "yes") {
    io.print("Cancelled; nothing was installed.");
    return undefined;
  }
  addServerToConfig(configPath, name, request.config);
  io.print(`Installed mcp_servers.${name}.`);
  // Commands read a word that starts with - as an option: such a name goes after --.
  if (name.startsWith("-"))
    io.print(`Its name starts with -: give it to commands after --, as in svc mcp test -- ${name}`);
  return name;
}

/**
 * The command a desktop runs for an svc:// link: this node with its loader flags and this svc, and the
 * SVC_HOME this command was given (the desktop's environment has none: links would go to ~/.svc).
 */
function handlerCommand(): string[] {
  const home = process.env.SVC_HOME?.trim() ? ["env", `SVC_HOME=${svcHome()}`] : [];
  return [...home, process.execPath, ...process.execArgv, process.argv[1] ?? "svc"];
}

/** `svc mcp login|reauth|logout|install`: attached to the `mcp` command group. */
export function registerMcpAuthCommands(mcp: Command): void {
  mcp
    .command("login <server>")
    .description("log in to an auth: oauth server (browser PKCE, or --flow device)")
    .option("--flow <flow>", "device or browser (overrides oauth.flow for this login)")
    .option("--profile <name>", "profile whose tokens to use")
    .action(async (server: string, opts: { flow?: string; profile?: string }) => {
      if (opts.flow !== undefined && opts.flow !== "device" && opts.flow !== "browser") {
        throw new SvcError("usage", `--flow: expected device or browser, got "${opts.flow}"`);
      }
      const paths = pathsFor(opts.profile);
      const servers = oauthServers(paths);
      const target = servers.find((s) => s.name === server);
      if (target === undefined) throw notAnOauthTarget(paths, server);
      warnProfileTypo(
        paths,
        opts.profile,
        `svc mcp login ${server}${opts.flow ? ` --flow ${opts.flow}` : ""}`,
      );
      await loginServer(paths, target, {
        fresh: true,
        ...(opts.flow ? { flow: opts.flow as LoginFlow } : {}),
      });
      process.stdout.write(`${server}: logged in\n`);
      // A running gateway retries a server that was not logged in on its backoff, which may be minutes away.
      const hint = await reloadHint(
        svcPaths(svcHome()),
        "The running gateway connects it at its next retry, or at once with svc mcp reload.",
      );
      if (hint !== undefined) process.stdout.write(`${hint}\n`);
    });

  mcp
    .command("reauth [server]")
    .description("re-authorize one auth: oauth server, or all with --all (follows oauth.flow)")
    .option("--all", "every enabled auth: oauth server")
    .option("--profile <name>", "profile whose tokens to use")
    .action(async (server: string | undefined, opts: { all?: boolean; profile?: string }) => {
      if (server !== undefined && opts.all === true)
        throw new SvcError(
          "usage",
          `a server name and --all exclude each other: svc mcp reauth ${server} re-authorizes that server, svc mcp reauth --all every enabled auth: oauth one`,
        );
      if (server === undefined && opts.all !== true)
        throw new SvcError("usage", "give one server name or --all");
      const paths = pathsFor(opts.profile);
      const servers = oauthServers(paths);
      const chosen = opts.all ? servers : servers.filter((s) => s.name === server);
      if (chosen.length === 0) {
        if (server !== undefined) throw notAnOauthTarget(paths, server);
        assertConfigInSight(paths.config, paths.home);
        throw new SvcError(
          "usage",
          `${paths.config}: ${noOauthServersProblem(loadConfig({ home: paths.home }).config.mcp_servers)}`,
        );
      }
      warnProfileTypo(paths, opts.profile, `svc mcp reauth ${server ?? "--all"}`);
      let failed = 0;
      for (const s of chosen) {
        try {
          await loginServer(paths, s, { fresh: false });
          process.stdout.write(`${s.name}: re-authorized\n`);
        } catch (err) {
          failed++;
          // As svc's own error line: a server's text in it may hold escape sequences or the credential it refused.
          process.stdout.write(
            `${s.name}: failed — ${terminalText(redactCredentials(describeError(err)))}\n`,
          );
        }
      }
      if (failed > 0) process.exitCode = 1;
    });

  mcp
    .command("logout <server>")
    .description("forget a server's saved login, revoking it at its authorization server")
    .option("--local", "only remove the saved tokens; do not revoke them")
    .option("--profile <name>", "profile whose tokens to forget")
    .action(async (server: string, opts: { local?: boolean; profile?: string }) => {
      await logoutServer(pathsFor(opts.profile), server, opts.local === true);
    });

  mcp
    .command("install [link]")
    .description("install an MCP server from an svc://mcp/install link (asks for confirmation)")
    .option("--register-handler", "register svc as the handler of svc:// links (Linux .desktop file)")
    .action(async (link: string | undefined, opts: { registerHandler?: boolean }) => {
      if (opts.registerHandler) {
        const { file, xdgMime } = await registerSchemeHandler(handlerCommand());
        process.stdout.write(
          `Wrote ${file}${
            xdgMime.set
              ? " and set it as the svc:// handler (xdg-mime)"
              : xdgMime.failed === undefined
                ? "; xdg-mime not found, register it with your desktop"
                : `; xdg-mime ${XDG_MIME_ARGS.join(" ")} ${terminalText(xdgMime.failed)}, so svc:// links are not set to open with it — run that command again, or register the file with your desktop`
          }\n`,
        );
        if (link === undefined) return;
      }
      if (link === undefined)
        throw new SvcError("usage", "give an svc://mcp/install?name=...&config=... link");
      const request = parseInstallLink(link);
      const io = stdinIO();
      try {
        const paths = svcPaths(svcHome());
        const installed = await confirmAndInstall(paths.config, request, io);
        if (installed === undefined) process.exitCode = 1;
        else {
          // As svc mcp add says it: a gateway already running reads the new entry only when it reloads.
          const hint = await reloadHint(paths, "The running gateway connects it with svc mcp reload.");
          if (hint !== undefined) io.print(hint);
        }
      } finally {
        io.close();
      }
    });
}
