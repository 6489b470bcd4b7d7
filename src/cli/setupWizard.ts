import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { parseDocument } from "yaml";
import { isPresent, readUtf8 } from "../config/configFileRead.js";
import { readEnvFile } from "../config/envFile.js";
import { loadConfig, WITHOUT_CONFIG } from "../config/load.js";
import { type SvcPaths, svcHome, svcPaths } from "../config/paths.js";
import { secretHeaderProblem, writtenAsVariable } from "../config/secretWarnings.js";
import { settingKey } from "../config/sections/webhook.js";
import { nothingToRun } from "../config/webhookEnabled.js";
import { isSvcError, SvcError } from "../errors.js";
import { withStartupProblems } from "../gateway/config.js";
import { startupProblems } from "../gateway/startupProblems.js";
import { allInterfacesWarning } from "../gateway/webhookStartupWarnings.js";
import { gatewayDirProblem } from "../io/homeWritable.js";
import { cronJobsStored } from "../io/stores/cronJobsStored.js";
import { withFileLockSync } from "../io/stores/fileLock.js";
import { checkYamlEditable, setEnvValues, setYamlValuesLocked, webhookKeyPath } from "../io/yamlEdit.js";
import { runningGateway } from "./gatewayLookup.js";
import { raiseAgain } from "./interrupt.js";
import { maskedOutput } from "./maskedOutput.js";
import { readSecretOption, secretFlag, theSecret } from "./secretOption.js";
import { runningGatewayLine } from "./setupRunningGateway.js";

export interface SetupOptions {
  enable?: boolean;
  disable?: boolean;
  port?: string;
  secret?: string;
  /** `--secret-file <path>`: read into `secret` before anything else (secretOption.ts). */
  secretFile?: string;
  /** How the secret read into `secret` was given (`--secret-file <path>`, `--secret -`): see secretOption.ts. */
  secretGiven?: string;
  generateSecret?: boolean;
  nonInteractive?: boolean;
}

interface SetupAnswers {
  readonly enabled: boolean;
  readonly port: number;
  /** undefined = keep the current secret. */
  readonly secret: string | undefined;
  /** The secret was generated here (printed once so it can be given to senders), not given by the user. */
  readonly secretGenerated: boolean;
}

/** `what` names where the value came from: the `--port` flag or the answer to the question. */
function parsePort(text: string, what: string): number {
  const port = Number(text);
  if (!isPort(text)) throw new SvcError("usage", `${what}: expected a port number (1-65535), got "${text}"`);
  return port;
}

/**
 * The current port, kept when no other is given: `0` too (a free port picked at each start), which is not
 * offered to be typed (1-65535) but must not be replaced by 8644 by a setup that leaves the port alone.
 */
const keptPort = (current: string): number => (current.trim() === "0" ? 0 : parsePort(current, "port"));

const generate = () => randomBytes(32).toString("hex");

/** A token sender's header cannot carry a control character; a line break in one is a paste accident. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\x00-\x1f\x7f]/;
const NO_CONTROL =
  "must not contain a line break, tab or other control character (pasted along with it?) — give the secret alone";

/** What the gateway would use now: the port and whether a global secret is set. */
interface Current {
  readonly port: string;
  readonly hasSecret: boolean;
}

/**
 * The effective settings (`.env` and the environment over config.yaml), so a port or global secret kept in
 * config.yaml is the default to keep, not replaced by 8644 or a new secret that would override it. An
 * unreadable config falls back to `.env` alone: setup must still work to repair things.
 */
function currentSettings(paths: SvcPaths): Current {
  const env = readEnvFile(paths.env);
  try {
    const webhook = loadConfig({ home: paths.home }).config.platforms.webhook;
    return {
      port: String(webhook.port),
      hasSecret: webhook.secret !== undefined,
    };
  } catch {
    // Read as the gateway would, the environment over `.env` over config.yaml, but each value on its own:
    // a secret written in config.yaml is what senders sign with even when another key keeps the file from
    // loading, and a new one in `.env` would override it. A port that is no port (`WEBHOOK_PORT=abc`,
    // often why the config did not load) is not offered: Enter would take it, be refused, and be asked
    // again with the same default.
    const port = [process.env.WEBHOOK_PORT, env.WEBHOOK_PORT, writtenWebhookValue(paths.config, "port")].find(
      (p) => p !== undefined && (p.trim() === "0" || isPort(p)),
    );
    const secret = [
      process.env.WEBHOOK_SECRET,
      env.WEBHOOK_SECRET,
      writtenWebhookValue(paths.config, "secret"),
    ];
    return {
      port: port?.trim() ?? "8644",
      hasSecret: secret.some((s) => s !== undefined && s.trim() !== ""),
    };
  }
}

const isPort = (text: string): boolean => {
  const port = Number(text);
  return /^\d+$/.test(text.trim()) && port >= 1 && port <= 65535;
};

/** A `platforms.webhook` key config.yaml writes (under `extra`, whose keys win, else directly), read as text without loading. */
function writtenWebhookValue(file: string, key: "port" | "secret"): string | undefined {
  if (!existsSync(file)) return undefined;
  const doc = parseDocument(readUtf8(file));
  for (const path of [
    ["platforms", "webhook", "extra", key],
    ["platforms", "webhook", key],
  ]) {
    const value: unknown = doc.getIn(path);
    if (typeof value === "number" || typeof value === "string") return String(value);
  }
  return undefined;
}

/** Flags that contradict each other or say nothing are refused before any question or write. */
function checkFlags(options: SetupOptions): void {
  if (options.enable && options.disable)
    throw new SvcError("usage", "--enable and --disable cannot be combined");
  if (options.secret !== undefined && options.generateSecret)
    throw new SvcError("usage", "--secret and --generate-secret cannot be combined");
  if (options.secret !== undefined && options.secret.trim() === "")
    throw new SvcError(
      "usage",
      `${secretFlag(options)}: the secret cannot be empty (or use --generate-secret)`,
    );
}

function fromFlags(options: SetupOptions, current: Current): SetupAnswers {
  const generated = options.secret === undefined && (options.generateSecret || !current.hasSecret);
  return {
    enabled: !options.disable,
    port: options.port === undefined ? keptPort(current.port) : parsePort(options.port, "--port"),
    secret: options.secret ?? (generated ? generate() : undefined),
    secretGenerated: generated === true,
  };
}

async function ask(options: SetupOptions, current: Current): Promise<SetupAnswers> {
  const terminal = process.stdin.isTTY === true;
  // On a terminal readline echoes each typed character; the secret's echo is hidden.
  const echo = maskedOutput();
  const rl = createInterface({
    input: process.stdin,
    output: terminal ? echo.stream : process.stdout,
    terminal,
  });
  // Ctrl-C on a terminal reaches readline as a key, not as a signal: without a listener readline just
  // closes, which would read as the end of the answers and write the defaults. It cancels setup instead.
  let interrupted = false;
  rl.on("SIGINT", () => {
    interrupted = true;
    rl.close();
  });
  // Lines are read through the iterator, not rl.question(): piped answers that arrive at once are kept.
  const lines = rl[Symbol.asyncIterator]();
  let ended = false;
  /** `unanswered`: what the end of input at this question leaves out, for a question with no default. */
  const question = async (prompt: string, hidden = false, unanswered?: string) => {
    process.stdout.write(prompt);
    echo.hidden = hidden;
    let closed = false;
    try {
      const next = await lines.next();
      if (interrupted) throw new SvcError("usage", "setup cancelled (Ctrl-C): nothing was written");
      closed = next.done === true;
      // Ctrl-D at a terminal ends the conversation: it must not read as Enter at every question left
      // (a new secret generated and written unasked). Piped answers that end early leave the defaults;
      // at a question with none (the secret to enter) they cancel too: no answer was given, not an empty one.
      if (closed && terminal) throw new Error("setup cancelled (Ctrl-D, end of input): nothing was written");
      if (closed && unanswered !== undefined)
        throw new Error(`setup cancelled (end of input: ${unanswered}): nothing was written`);
      ended ||= closed;
      return next.done ? "" : String(next.value);
    } finally {
      echo.hidden = false;
      // The Enter that ended a hidden answer was not echoed either, nor is one that never came (Ctrl-D);
      // piped answers are not echoed at all, so without it every prompt and the result would run together.
      if (hidden || !terminal || closed) process.stdout.write("\n");
    }
  };
  // A wrong answer is explained and the question asked again, as long as there are answers to read.
  const askUntilValid = async <T>(
    prompt: string,
    parse: (answer: string) => T,
    hidden = false,
    unanswered?: string,
  ): Promise<T> => {
    for (;;) {
      const answer = await question(prompt, hidden, unanswered);
      try {
        return parse(answer);
      } catch (err) {
        if (ended || !isSvcError(err)) throw err;
        process.stdout.write(`${err.message}\n`);
      }
    }
  };
  try {
    // A flag given on a terminal answers its question, which is not asked: an answer would be overruled
    // by the flag (or overrule it), so the questions left are the ones no flag answered.
    const flagPort = options.port === undefined ? undefined : parsePort(options.port, "--port");
    const enabled =
      options.enable || options.disable
        ? !options.disable
        : await askUntilValid("Enable the webhook adapter? [Y/n] ", (answer) => {
            const a = answer.trim().toLowerCase();
            if (!["", "y", "yes", "n", "no"].includes(a))
              throw new SvcError("usage", `answer y or n (empty: y), not "${answer.trim()}"`);
            return !(a === "n" || a === "no");
          });
    const port =
      flagPort ??
      (await askUntilValid(`Port [${current.port}]: `, (answer) =>
        answer.trim() === "" ? keptPort(current.port) : parsePort(answer.trim(), "port"),
      ));
    if (options.secret !== undefined)
      return { enabled, port, secret: options.secret, secretGenerated: false };
    if (options.generateSecret) return { enabled, port, secret: generate(), secretGenerated: true };
    const hasSecret = current.hasSecret;
    // A typo must not decide about the secret senders sign with: only the offered answers count.
    const offered = hasSecret
      ? ["k", "keep", "g", "generate", "e", "enter"]
      : ["g", "generate", "e", "enter"];
    const choice = await askUntilValid(
      hasSecret
        ? "Global secret: [k]eep the current one, [g]enerate a new one, or [e]nter your own? [k] "
        : "Global secret: [g]enerate one, or [e]nter your own? [g] ",
      (answer) => {
        const a = answer.trim().toLowerCase();
        if (a !== "" && !offered.includes(a))
          throw new SvcError(
            "usage",
            `answer ${hasSecret ? "k, g or e" : "g or e (there is no current secret to keep)"}, not "${answer.trim()}"`,
          );
        return a;
      },
    );
    let secret: string | undefined;
    let generated = false;
    if (choice.startsWith("e")) {
      secret = await askUntilValid(
        terminal ? "Secret (not shown as you type): " : "Secret: ",
        (answer) => {
          if (answer.trim() === "") throw new SvcError("usage", "the secret cannot be empty");
          if (CONTROL.test(answer)) throw new SvcError("usage", `the secret ${NO_CONTROL}`);
          // Kept as typed, as a --secret is: a space at an end is part of the HMAC key the sender may use,
          // and the warning below says that a token header cannot carry it.
          return answer;
        },
        true,
        "the secret was not entered",
      );
    } else if (choice.startsWith("g") || (!hasSecret && !choice.startsWith("k"))) {
      secret = generate();
      generated = true;
    }
    return { enabled, port, secret, secretGenerated: generated };
  } catch (err) {
    if (!interrupted) throw err;
    rl.close();
    process.stdout.write("\n");
    // Nothing is written; the command ends as a Ctrl-C ends any other (by SIGINT, 130 in a shell).
    raiseAgain("SIGINT");
    return await new Promise<never>(() => undefined);
  } finally {
    rl.close();
  }
}

/**
 * `svc gateway setup`: enablement, port and global secret go to `.env` as WEBHOOK_ENABLED / WEBHOOK_PORT /
 * WEBHOOK_SECRET (mode 0600; they override config.yaml). When config.yaml exists, `enabled` and `port`
 * are mirrored into `platforms.webhook` with comments kept; the secret never goes into config.yaml.
 */
export async function runSetup(options: SetupOptions): Promise<void> {
  // Named as given, before the file or stdin is read (after, it would read as --secret).
  if (options.secretFile !== undefined && options.generateSecret)
    throw new SvcError("usage", "--secret-file and --generate-secret cannot be combined");
  if (options.secret === "-" && options.generateSecret)
    throw new SvcError("usage", "--secret - and --generate-secret cannot be combined");
  await readSecretOption(options);
  if (options.secret !== undefined && CONTROL.test(options.secret))
    throw new SvcError("usage", `${secretFlag(options)}: ${NO_CONTROL}`);
  checkFlags(options);
  const paths = svcPaths(svcHome());
  const current = currentSettings(paths);
  const flagged =
    options.enable ||
    options.disable ||
    options.port !== undefined ||
    options.secret !== undefined ||
    options.generateSecret;
  // Refused before the first question, not after the answers (a secret typed in vain); a bad --port,
  // a usage error (exit 2), is named first as before.
  if (options.port !== undefined) parsePort(options.port, "--port");
  // config.yaml first: when it cannot be edited nothing is written, and no generated secret goes unseen. A
  // link to nothing, or into a directory this user may not look into, is named as every command names it.
  const edited = isPresent(paths.config, WITHOUT_CONFIG);
  // Under platforms.webhook.extra when that mapping exists (its keys win): the message names where.
  const enabledPath = webhookKeyPath(paths.config, "enabled");
  if (edited) checkYamlEditable(paths.config, [enabledPath, webhookKeyPath(paths.config, "port")]);
  const answers =
    options.nonInteractive || (flagged && !process.stdin.isTTY)
      ? fromFlags(options, current)
      : await ask(options, current);
  // Both files under config.yaml's lock: another setup run meanwhile writes its pair after this one, not
  // between the two writes (config.yaml naming its port, .env, which wins, this one's).
  withFileLockSync(paths.config, () => {
    if (edited) {
      setYamlValuesLocked(paths.config, [
        [enabledPath, answers.enabled],
        [webhookKeyPath(paths.config, "port"), answers.port],
      ]);
    }
    setEnvValues(paths.env, {
      WEBHOOK_ENABLED: String(answers.enabled),
      WEBHOOK_PORT: String(answers.port),
      ...(answers.secret === undefined ? {} : { WEBHOOK_SECRET: answers.secret }),
    });
  });
  const lines = [
    `Wrote WEBHOOK_ENABLED=${answers.enabled}, WEBHOOK_PORT=${answers.port}${answers.secret === undefined ? "" : ", WEBHOOK_SECRET"} to ${paths.env}`,
  ];
  if (edited) {
    lines.push(
      `Updated ${enabledPath.join(".")} and port in ${paths.config} (other settings and comments kept)`,
    );
  }
  // A given secret a token header cannot carry (a space at an end, a character outside printable ASCII)
  // still keys HMAC signatures, but a GitLab token or a Bearer credential can never match it.
  const headerProblem =
    answers.secret === undefined || answers.secretGenerated ? undefined : secretHeaderProblem(answers.secret);
  if (headerProblem !== undefined)
    process.stderr.write(
      `Warning: ${options.secret === undefined ? "the secret you entered" : theSecret(options)} ${headerProblem}, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401 on the routes that use the global secret; HMAC signatures and Basic credentials still verify — run setup again with --generate-secret if such a route takes tokens\n`,
    );
  // `--secret '${GH_SECRET}'` quoted away from the shell: .env keeps it as written, in single quotes.
  if (answers.secret !== undefined && !answers.secretGenerated && writtenAsVariable(answers.secret))
    process.stderr.write(
      `Warning: ${options.secret === undefined ? "the secret you entered" : theSecret(options)} is written as a variable (\${NAME} or $NAME), but setup saves it in ${paths.env} as written (in single quotes, which no variable replaces), so the text itself is the secret and every signature from a sender keyed with the variable's value is answered 401 — give the secret itself: svc gateway setup --secret "$NAME" (the shell replaces it)\n`,
    );
  // A generated secret is shown once, to give to senders; one the user typed or passed is not echoed.
  if (answers.secretGenerated) lines.push(`Global webhook secret: ${answers.secret}`);
  else if (answers.secret !== undefined)
    lines.push(`Global webhook secret: the one you gave (saved as WEBHOOK_SECRET in ${paths.env})`);
  // The process environment wins over .env: a value set there hides what was just written.
  const shadowed = ["WEBHOOK_ENABLED", "WEBHOOK_PORT", "WEBHOOK_SECRET"].filter(
    (name) => (process.env[name] ?? "") !== "",
  );
  for (const name of shadowed) {
    lines.push(
      `Note: ${name} is set in this shell's environment and overrides ${paths.env} for a gateway started from it — unset it (unset ${name}) or change it there`,
    );
  }
  let problem: string | undefined;
  try {
    const loaded = loadConfig({ home: paths.home });
    // The gateway's own start checks: the startup rules, and (--disable with no MCP server and no cron
    // job) that the adapter off leaves it nothing to run.
    const idle = nothingToRun(loaded, () => cronJobsStored(loaded.paths.home));
    // A file where it makes its logs or state directory refuses the start too, whatever the config.
    const dirs = gatewayDirProblem(loaded.paths.home);
    const refused = [
      ...startupProblems(loaded.config, loaded.paths.config),
      ...(idle === undefined ? [] : [idle]),
      ...(dirs === undefined ? [] : [dirs]),
    ];
    if (refused.length > 0) problem = refused.join("\n");
    // As the gateway's start and svc config check warn: a config.yaml without host listens on every interface.
    const { webhook } = loaded.config.platforms;
    const exposed = webhook.enabled
      ? allInterfacesWarning(webhook.host, webhook.port, settingKey(webhook, "host"))
      : undefined;
    if (exposed !== undefined) process.stderr.write(`Warning: ${exposed.replace(/^\[webhook\] /, "")}\n`);
  } catch (failed) {
    const err = withStartupProblems(failed);
    problem = isSvcError(err) ? err.message : String(err);
  }
  if (problem !== undefined) {
    lines.push(`Note: the gateway will not start until this is fixed:\n${problem}`);
  }
  const running = await runningGateway(paths);
  if (running !== undefined) {
    lines.push(runningGatewayLine(paths, running.pid, answers, current.port, running.elsewhere?.namespace));
  } else if (problem === undefined) {
    lines.push(
      answers.enabled ? "Start the gateway with: svc gateway start" : "The webhook adapter is disabled.",
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}
