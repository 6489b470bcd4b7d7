import { describe } from "../../config/describe.js";
import { givenBy } from "../../config/givenValues.js";
import type { PlatformConfig } from "../../config/sections/platforms.js";
import { scrub } from "../credentials.js";
import { cutText } from "../cutText.js";
import { executableProblem } from "../executable.js";
import { startDescriptorsProblem } from "../openFiles.js";
import { runProcess } from "../process.js";
import { partlyDelivered, partsToSend, recipientQueue, unfilledNote } from "./chat.js";
import { GH_TOKEN_VARIABLES } from "./ghTokens.js";
import { recipientGiven, shownRecipient } from "./givenRecipient.js";
import { messageParts } from "./split.js";
import { DeliveryError, type DeliveryMessage, type DeliveryTarget, type TargetDeps } from "./target.js";
import { isPullRequestNumber, REPO_NAME, tooLongNote } from "./validate.js";

/** GitHub comment bodies hold up to 65536 characters. */
export const FORGE_COMMENT_LIMIT = 65_536;
const NOT_A_PULL_REQUEST = /Could not resolve to a PullRequest/i;
/**
 * GitHub's secondary rate limits (comments created too fast: "You have exceeded a secondary rate limit",
 * GraphQL "was submitted too quickly") and its primary one ("API rate limit exceeded"): nothing was
 * posted, and GitHub asks clients to wait at least a minute before trying again.
 */
const RATE_LIMITED = /secondary rate limit|submitted too quickly|API rate limit (?:already )?exceeded/i;
const RATE_LIMIT_WAIT_SECONDS = 60;
/**
 * gh could not reach GitHub (its DNS failure "error connecting to api.github.com", a refused or reset
 * connection, a TLS handshake or read that timed out) or GitHub answered a 5xx (`HTTP 502: ...`, GraphQL's
 * `non-200 OK status code: 503 ...`): a failure the next try may not meet, retried in agent mode with the
 * backoff every platform's connection errors and 5xx answers get.
 */
const UNREACHABLE =
  /error connecting to |dial tcp|connection refused|connection reset by peer|no such host|TLS handshake timeout|i\/o timeout|\bHTTP 5\d\d\b|non-200 OK status code: 5\d\d/i;

export interface ForgeDestination {
  readonly repo: string;
  readonly prNumber: number;
}

/**
 * Validates `deliver_extra.repo` (`owner/name` or `host/owner/name`) and `deliver_extra.pr_number` (a
 * positive integer). A host must be written in the route's `repo` itself: gh sends `GH_ENTERPRISE_TOKEN` to
 * whatever host `--repo` names, so a host the payload filled in (`repo: "{repository.full_name}"` rendering
 * `evil.example/o/r`) would have the token, and the comment, sent to a server of the sender's choosing.
 */
export function forgeDestination(
  message: Pick<DeliveryMessage, "extra" | "route" | "written" | "unfilled">,
): ForgeDestination {
  const repo = message.extra.repo?.trim() ?? "";
  const pr = message.extra.pr_number?.trim() ?? "";
  if (!REPO_NAME.test(repo) || repo.split("/").some((part) => part === "." || part === "..")) {
    throw new DeliveryError(
      `forge_comment: route "${message.route}": deliver_extra.repo must be owner/name (or host/owner/name for GitHub Enterprise Server), got ${shownRecipient(repo, message, ["repo"], undefined, (value) => `"${cutText(value, 100)}"`)}${unfilledNote(message, "repo", repo)}`,
      false,
    );
  }
  const parts = repo.split("/");
  const written = message.written?.repo;
  if (parts.length === 3 && typeof written === "string" && !written.trim().startsWith(`${parts[0]}/`)) {
    throw new DeliveryError(
      `forge_comment: route "${message.route}": deliver_extra.repo names the host "${cutText(parts[0] ?? "", 100)}", which the event filled in — not run: gh would send it the GitHub Enterprise token; write the host in the route's repo itself (repo: "ghe.example.com/{repository.full_name}") or set GH_HOST`,
      false,
    );
  }
  // `repo: "myorg/{repository.name}"` with a name of `evil/x` reads as host myorg: the host "is written",
  // but the route wrote owner/name. A GitHub owner has no dot, a host has one (or a port, or is localhost).
  if (
    parts.length === 3 &&
    typeof written === "string" &&
    literalSlashes(written) < 2 &&
    !/[.:]/.test(parts[0] ?? "") &&
    parts[0]?.toLowerCase() !== "localhost"
  ) {
    throw new DeliveryError(
      `forge_comment: route "${message.route}": deliver_extra.repo "${cutText(repo, 100)}" reads as host "${cutText(parts[0] ?? "", 100)}", owner "${cutText(parts[1] ?? "", 100)}": the event filled in a / where the route writes owner/name — not run: gh would send that host the GitHub Enterprise token; a GitHub Enterprise host is written with its domain (repo: "ghe.example.com/{repository.full_name}"), or set GH_HOST`,
      false,
    );
  }
  if (!isPullRequestNumber(pr)) {
    throw new DeliveryError(
      `forge_comment: route "${message.route}": deliver_extra.pr_number must be a positive integer, got ${shownRecipient(pr, message, ["pr_number"], undefined, (value) => `"${cutText(value, 30)}"`)}${unfilledNote(message, "pr_number", pr)}${recipientGiven(pr, message, ["pr_number"]) === undefined ? tooLongNote(pr) : ""}`,
      false,
    );
  }
  return { repo, prNumber: Number(pr) };
}

/** The slashes a template writes itself, outside its `{placeholders}`. */
function literalSlashes(template: string): number {
  return template.replace(/\{[^{}]*\}/g, "").split("/").length - 1;
}

/**
 * Posts a pull-request comment with the GitHub CLI: `gh pr comment <n> --repo <owner/name> --body-file -`,
 * the body on stdin (never a shell string). A missing or failing `gh` posts nothing and fails the delivery.
 */
/** An environment's set variables only (a `process.env` value may be undefined). */
function definedValues(env: NodeJS.ProcessEnv): Record<string, string> {
  const defined: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) defined[name] = value;
  return defined;
}

export function forgeCommentTarget(
  settings: PlatformConfig<"forge_comment">,
  deps: TargetDeps,
): DeliveryTarget {
  const timeout = settings.timeout_seconds * 1000;
  const env = deps.env ?? process.env;
  const secrets = GH_TOKEN_VARIABLES.map((name) => env[name]);
  // A command a `${VAR}` gave is named as config.yaml writes it.
  const commandGiven = givenBy(settings, "command");
  const command = commandGiven === undefined ? settings.command : describe(commandGiven);

  async function gh(args: readonly string[], input: string | undefined, signal?: AbortSignal) {
    const short = startDescriptorsProblem();
    if (short !== undefined)
      throw new DeliveryError(
        `forge_comment: ${commandGiven === undefined ? `"${settings.command}"` : command} could not be started (${short})`,
        true,
      );
    // In a process group of its own, ended whole at the timeout and a cancel (`runProcess`): a child of the
    // command (a wrapper script's gh, a credential helper) holding its pipes kept the delivery waiting past
    // the timeout and went on to post the comment, which the retry then posted again.
    const result = await runProcess({
      file: settings.command,
      args,
      input: input ?? "",
      env: definedValues(env),
      timeoutMs: timeout,
      ...(signal === undefined ? {} : { signal }),
    });
    if (result.ok) return result;
    if (result.timedOut === true)
      throw new DeliveryError(
        `forge_comment: ${command} ${args[0]} ${args[1]} gave no answer within ${timeout / 1000}s`,
        true,
      );
    // Never started (not found, not executable, a directory): say why, not "exited with a signal".
    if (result.exitCode === undefined && result.killedBy === undefined && result.why !== "canceled") {
      const problem =
        executableProblem(settings.command, env.PATH ?? "", commandGiven) ??
        // The system's reason may name the file: of one a variable gave, it is left out.
        (commandGiven === undefined
          ? `"${settings.command}" ${result.why}`
          : `${command} could not be started`);
      const fix = settings.command.includes("/")
        ? "set platforms.forge_comment.command to the gh executable"
        : 'install the GitHub CLI and run "gh auth login"';
      throw new DeliveryError(`forge_comment: ${problem} — ${fix}`, false);
    }
    // Scrubbed before it is cut: a cut through an echoed token would leave its beginning. On one line,
    // as every platform's error is quoted: gh writes several (`gh auth status`: a line per account).
    const detail = cutText(
      scrub(result.stderr || result.why, secrets)
        .replace(/\s+/g, " ")
        .trim(),
      500,
    );
    const limited = RATE_LIMITED.test(detail);
    throw new DeliveryError(
      `forge_comment: ${command} ${args[0]} ${args[1]} exited with ${result.exitCode ?? "a signal"}: ${detail}`,
      limited || UNREACHABLE.test(detail),
      limited ? RATE_LIMIT_WAIT_SECONDS : undefined,
    );
  }

  /**
   * `gh pr comment`; when the number is an issue, not a pull request (GitHub: "Could not resolve to a
   * PullRequest"), `gh issue comment`, which comments on either (a pull-request/issue comment).
   */
  async function comment(repo: string, number: number, body: string, signal?: AbortSignal) {
    const args = (kind: string) => [kind, "comment", String(number), "--repo", repo, "--body-file", "-"];
    try {
      await gh(args("pr"), body, signal);
    } catch (err) {
      if (!(err instanceof DeliveryError) || !NOT_A_PULL_REQUEST.test(err.message)) throw err;
      await gh(args("issue"), body, signal);
    }
  }

  const oneAtATime = recipientQueue(deps.sleep);
  return {
    name: "forge_comment",
    async check(signal) {
      await gh(["auth", "status"], undefined, signal);
    },
    async send(message, signal, options = {}) {
      const { repo, prNumber } = forgeDestination(message);
      const parts = messageParts(message.text, FORGE_COMMENT_LIMIT, { markdown: true });
      // One pull request's comments go one after another: the parts of two long texts do not interleave.
      await oneAtATime(`${repo}#${prNumber}`, options, signal, async (runStep) => {
        for (const [index, body] of partsToSend(parts, options.fromPart)) {
          await runStep(() => comment(repo, prNumber, body, signal), index).catch((err: unknown) => {
            throw index === 0 ? err : partlyDelivered(err, index, parts.length);
          });
        }
      });
      return { chatId: `${repo}#${prNumber}`, parts: parts.length };
    },
  };
}
