import { isLoopbackHost } from "../../config/host.js";
import type { LoadedConfig } from "../../config/load.js";
import { nearMiss } from "../../config/nearMiss.js";
import { DEFAULT_PROFILE, inProfile, nameCharNote, profileFlag, svcPaths } from "../../config/paths.js";
import { publicKeySecretProblem } from "../../config/secretWarnings.js";
import type { PlatformName } from "../../config/sections/platforms.js";
import {
  INSECURE_NO_AUTH,
  ROUTE_NAME_CHAR,
  ROUTE_NAME_RULE,
  routeNameProblem,
} from "../../config/sections/webhook.js";
import { webhookHostSetting } from "../../config/webhookEnabled.js";
import { SvcError } from "../../errors.js";
import { gatewayStateFile } from "../../io/gatewayState.js";
import { shellWord } from "../../io/shellWord.js";
import { invalidJobMessage, jobNamesIn, jobRef, lookupJob } from "../../io/stores/cronJobRecord.js";
import { cronStore } from "../../io/stores/cronStore.js";
import { profilesWithJob } from "../../io/stores/profilesWithJob.js";
import type { Subscription } from "../../io/stores/subscriptions.js";
import { unusableCronStore } from "../../io/stores/unusableCronStore.js";
import { EXTRA_KEYS, shadowedExtraKeys } from "../../io/targets/extraKeys.js";
import { canonicalTarget } from "../../io/targets/names.js";
import { forgeCommentProgramWarning, targetStartupProblems } from "../../io/targets/validate.js";
import { checkDeliverExtra } from "../format.js";
import { secretFlag } from "../secretOption.js";
import type { Address } from "./address.js";
import type { SubscribeOptions } from "./subscribeOptions.js";

/**
 * Why every delivery of subscription `name` fails (its `deliver` names no target, or a platform that is not
 * enabled), as `svc webhook list` notes it; none for a cron route, whose job delivers.
 */
export function failingTargetNotes(loaded: LoadedConfig, name: string, record: Subscription): string[] {
  if (record.cron_job !== undefined || canonicalTarget(record.deliver) === "log") return [];
  const { config, short } = asOnlyRoute(loaded, name, record);
  const { unknown, notEnabled } = targetStartupProblems(config, loaded.paths.config);
  return [...unknown, ...notEnabled].map(short);
}

/** The config with the record as its one route, and its problems named `<name>: <key>: ...`. */
function asOnlyRoute(loaded: LoadedConfig, name: string, record: Subscription) {
  const webhook = { ...loaded.config.platforms.webhook, routes: { [name]: record } };
  const at = `${loaded.paths.config}: platforms.webhook.routes.${name}.`;
  return {
    config: { ...loaded.config, platforms: { ...loaded.config.platforms, webhook } },
    short: (problem: string) => `${name}: ${problem.startsWith(at) ? problem.slice(at.length) : problem}`,
  };
}

/** An unknown `deliver` is refused; a target whose platform is not set up yet is only a warning here. */
export function checkTarget(loaded: LoadedConfig, name: string, record: Subscription): void {
  const { config, short } = asOnlyRoute(loaded, name, record);
  const { unknown, notEnabled, warnings } = targetStartupProblems(config, loaded.paths.config);
  if (unknown.length > 0) throw new SvcError("usage", unknown.map(short).join("\n"));
  for (const problem of [...notEnabled, ...warnings]) process.stderr.write(`Warning: ${short(problem)}\n`);
  process.stderr.write(extraKeyHint(name, record, warnings));
  // forge_comment's gh not on PATH: every comment of this subscription would fail (svc config check says so too).
  const gh =
    canonicalTarget(record.deliver) === "forge_comment"
      ? forgeCommentProgramWarning(config, loaded.paths.config)
      : undefined;
  if (gh !== undefined) process.stderr.write(`Warning: ${gh}\n`);
}

/**
 * What to run about the `deliver_extra` warnings: a key the target never reads is removed with
 * `--deliver-extra <key>=` (setting keys would leave it in the record); a missing one is set.
 */
export function extraKeyHint(name: string, record: Subscription, warnings: readonly string[]): string {
  const platform = canonicalTarget(record.deliver);
  const read: readonly string[] =
    platform === undefined || platform === "log" ? [] : EXTRA_KEYS[platform as PlatformName];
  // Named only where the target's warnings name them (not on a cron route, whose job delivers).
  const named = warnings.some((problem) => problem.includes(" does not read it"));
  const extra = record.deliver_extra ?? {};
  const shadowed =
    named && read.length > 0
      ? new Set(shadowedExtraKeys(platform as PlatformName, extra).map(({ key }) => key))
      : new Set<string>();
  const unread = Object.keys(extra).filter(
    (key) => named && read.length > 0 && (!read.includes(key) || shadowed.has(key)),
  );
  const missing = warnings.some(
    (problem) => problem.includes(".deliver_extra.") && !problem.includes(" does not read it"),
  );
  return (
    (unread.length > 0
      ? `Remove ${unread.length === 1 ? "it" : "them"} with: svc webhook subscribe ${name} ${unread.map((key) => `--deliver-extra ${shellWord(`${key}=`)}`).join(" ")}\n`
      : "") +
    (missing
      ? `Set deliver_extra keys with: svc webhook subscribe ${name} --deliver-extra <key>=<value>\n`
      : "")
  );
}

/**
 * What to run about keys a log route leaves without effect (kept from before a `--deliver log`): the
 * warning names them as config.yaml would; this names the flags that remove them.
 */
export function logRouteHint(name: string, record: Subscription): string {
  if (record.cron_job !== undefined || canonicalTarget(record.deliver) !== "log") return "";
  const flags = [
    ...Object.keys(record.deliver_extra ?? {}).map((key) => `--deliver-extra ${shellWord(`${key}=`)}`),
    ...(record.mirror_to_session ? ["--no-mirror-to-session"] : []),
  ];
  if (flags.length === 0) return "";
  return `Deliver to a target with: svc webhook subscribe ${name} --deliver <target>; or remove ${flags.length === 1 ? "it" : "them"} with: svc webhook subscribe ${name} ${flags.join(" ")}\n`;
}

/**
 * A `cron_job` must name a job of the route's own profile: that is the store the gateway fires it from.
 * `name` is given when the check is of a job set earlier, which a `--route-profile` rebinding moves away from.
 * A profile whose directory, or whose `cron` directory (the default profile's too), is a link to nothing (or a
 * file) has a store that cannot be read, not one without the job: refused as such, in the words of the gateway's
 * warning for such a route.
 */
export function checkCronJob(loaded: LoadedConfig, record: Subscription, name?: string): void {
  if (record.cron_job === undefined) return;
  const jobs = cronStore(svcPaths(loaded.paths.home, record.profile).cronJobs);
  // Read through a link to nothing the store is empty: "no such cron job", whose advice (svc cron create)
  // fails on the same link.
  const unusable = unusableCronStore(loaded.paths.home, record.profile);
  if (unusable !== undefined)
    throw new SvcError(
      "usage",
      `${name === undefined ? `--cron-job ${record.cron_job}` : `${name} fires cron job ${record.cron_job} (set earlier)`}: ${jobs.path} cannot be read: ${unusable}; until then every event on this route would be answered 503 (the sender retries) — nothing was written`,
    );
  const { records } = jobs.read();
  const found = lookupJob(jobs.path, records, record.cron_job);
  // A job edited by hand into an invalid record is never fired: refused with its file, key and problem.
  if (found !== undefined && !found.ok)
    throw new SvcError(
      "usage",
      `--cron-job ${record.cron_job}: ${invalidJobMessage(found, `svc cron remove${profileFlag(record.profile)}`)}`,
    );
  const job = found?.job;
  if (found?.ok === true && job !== undefined && job.state !== "enabled") {
    const flag = profileFlag(record.profile);
    const resume = jobRef(jobs.path, records, found.key, job.name);
    process.stderr.write(
      `Warning: cron job ${job.name}${record.cron_job === job.name ? "" : ` (${record.cron_job})`} is ${job.state}: events are logged and dropped until svc cron resume ${resume}${flag}\n`,
    );
  }
  if (job === undefined) {
    const flag = profileFlag(record.profile);
    const profile = record.profile ?? DEFAULT_PROFILE;
    const elsewhere = profilesWithJob(loaded.paths.home, record.cron_job, profile);
    if (name !== undefined)
      throw new SvcError(
        "usage",
        `${name} fires cron job ${record.cron_job} (set earlier), which is not a job of profile ${profile}, the profile --route-profile ${profile} binds it to: a subscription fires the jobs of its own profile${elsewhere.length === 0 ? "" : ` (it is a job of profile ${elsewhere.join(", ")})`} — create it in profile ${profile} (svc cron create${flag}), name one of its jobs with --cron-job, or add --no-cron-job; nothing was written`,
      );
    const bind =
      elsewhere.length === 0
        ? ""
        : `; it is a job of profile ${elsewhere.join(", ")}, and a subscription fires the jobs of the profile it is bound to — add --route-profile ${elsewhere[0]}, or`;
    // A job's name misspelt (`nightyl`) is named, rather than offered as a job to create.
    const meant = bind === "" ? nearMiss(record.cron_job, jobNamesIn(records)) : undefined;
    throw new SvcError(
      "usage",
      meant !== undefined
        ? `--cron-job ${record.cron_job}: no such cron job${inProfile(record.profile)} (${jobs.path}) — did you mean ${meant}? (--cron-job ${meant}; svc cron list${flag} shows the jobs)`
        : `--cron-job ${record.cron_job}: no such cron job${inProfile(record.profile)} (${jobs.path})${bind === "" ? " —" : bind} create it with svc cron create${flag}, or see svc cron list${flag}`,
    );
  }
}

/**
 * Spec 2.2 rule 5 on the record: the gateway would ignore it, so refuse it here with the reason. The
 * running gateway's bind counts too: `svc gateway start --host 0.0.0.0` overrides a loopback config.
 */
export function checkInsecure(
  loaded: LoadedConfig,
  name: string,
  record: Subscription,
  running: Address,
  /** The option the secret was given with (`secretFlag`). */
  flag = "--secret",
): void {
  if (record.secret !== INSECURE_NO_AUTH) return;
  const host = loaded.config.platforms.webhook.host;
  const allowed = "only allowed when the gateway binds to loopback (127.0.0.1, localhost, ::1)";
  if (!isLoopbackHost(host))
    throw new SvcError(
      "usage",
      `${name}: ${flag} INSECURE_NO_AUTH is ${allowed}, but ${webhookHostSetting(loaded)} — use a real secret, or bind to 127.0.0.1`,
    );
  if (running.host !== undefined && !isLoopbackHost(running.host))
    throw new SvcError(
      "usage",
      `${name}: ${flag} INSECURE_NO_AUTH is ${allowed}, but the running gateway binds to ${running.host} (started with --host ${running.host}, ${gatewayStateFile(loaded.paths)}) — use a real secret, or restart it on loopback: svc gateway stop, then svc gateway start`,
    );
}

export function checkName(name: string): void {
  const problem = routeNameProblem(name);
  if (problem === `${ROUTE_NAME_RULE}${nameCharNote(name, ROUTE_NAME_CHAR)}`)
    throw new SvcError(
      "usage",
      `"${name}" is not a valid route name: use letters, digits, '.', '_' and '-' (1-64, starting with a letter or digit)${nameCharNote(name, ROUTE_NAME_CHAR)}`,
    );
  if (problem !== undefined) throw new SvcError("usage", `"${name}" is not a valid route name: ${problem}`);
}

/** A blank value of these would be stored as-is (a blank secret signs nothing): refused, naming the flag. */
/**
 * `--deliver-chat-id` and `--deliver-extra chat_id=` name one key: refused as a key repeated in
 * `--deliver-extra` is, rather than one value dropped without a word.
 */
export function checkOneChatId(options: SubscribeOptions): void {
  if (options.deliverChatId !== undefined && Object.hasOwn(options.deliverExtra ?? {}, "chat_id"))
    throw new SvcError(
      "usage",
      "--deliver-chat-id and --deliver-extra chat_id= both set deliver_extra.chat_id, which holds one value: keep one",
    );
}

export function checkNotBlank(options: SubscribeOptions): void {
  // What leaving each out gives: said for a new subscription too, which has no current value to keep.
  const values: [string, string | undefined, string][] = [
    [
      "--deliver",
      options.deliver,
      "leave the option out (a new subscription delivers to log, an existing one keeps its target), or name a target",
    ],
    [
      "--cron-job",
      options.cronJob === false ? undefined : options.cronJob,
      "give the job's id or name, or leave the option out (--no-cron-job stops firing one)",
    ],
    // A secret read from a file or stdin is checked with what it was read from (checkSecretValue).
    [
      "--secret",
      options.secretGiven === undefined ? options.secret : undefined,
      "leave the option out: a new subscription gets a generated secret, an existing one keeps its own",
    ],
  ];
  for (const [flag, value, fix] of values) {
    if (value !== undefined && value.trim() === "")
      throw new SvcError("usage", `${flag}: must not be empty — ${fix}`);
  }
  // '' removes the key (the platform's home channel is then used); spaces alone are no chat id, and would
  // fail every delivery ("rendered empty") without a word here.
  if (
    options.deliverChatId !== undefined &&
    options.deliverChatId !== "" &&
    options.deliverChatId.trim() === ""
  )
    throw new SvcError(
      "usage",
      "--deliver-chat-id: only spaces — give the chat id, or --deliver-chat-id '' to remove it (the platform's home channel is then used)",
    );
  checkDeliverExtra(options.deliverExtra, true);
  checkSecretValue(options);
}

/**
 * The secret given (`--secret`, or read from `--secret-file <path>` or stdin): refused when it cannot be one,
 * naming the option it was given with (the file, never the secret).
 */
function checkSecretValue(options: SubscribeOptions): void {
  const { secret } = options;
  if (secret === undefined) return;
  const flag = secretFlag(options);
  // A blank --secret is refused with the other options' blank values (checkNotBlank).
  if (options.secretGiven !== undefined && secret.trim() === "")
    throw new SvcError(
      "usage",
      `${flag}: only white space — ${flag === "--secret -" ? "pipe the secret in" : "write the secret into the file"}`,
    );
  const publicKey = publicKeySecretProblem(secret);
  if (publicKey !== undefined) throw new SvcError("usage", `${flag} ${publicKey}`);
  // A token sender's header cannot carry one, and the printed Secret: line would be cut by a line break.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  if (/[\x00-\x1f\x7f]/.test(secret))
    throw new SvcError(
      "usage",
      `${flag}: must not contain a line break, tab or other control character (pasted along with it?) — ${options.secretGiven === undefined ? "give the secret alone" : "give the secret alone (a file may end with one line break)"}`,
    );
}

/** Route properties a subscription record holds that no option sets, with the shape to write by hand. */
const HAND_WRITTEN: ReadonlyArray<readonly ["skills" | "filters" | "script" | "coalesce", string]> = [
  ["skills", '["<skill>"]'],
  ["filters", '[{"field": "<payload path>", ...}]'],
  ["script", '"<path>"'],
  ["coalesce", '{"key": "<payload path>", "window_seconds": 30, "max_wait_seconds": 300}'],
];

/**
 * `--toolsets` and `--profile` are not options of `subscribe` (a subscription's toolsets are edited into
 * the file by hand, and the binding is `--route-profile`), nor are the other route properties a record
 * holds but only a hand edit sets (`skills`, `filters`, `script`, `coalesce`): refused with what to do
 * instead of a bare "unknown option".
 */
export function checkNotOptions(name: string, options: SubscribeOptions, file: string): void {
  if (options.toolsets !== undefined)
    throw new SvcError(
      "usage",
      `unknown option '--toolsets': no option sets a subscription's toolsets (they widen what its runs may do) — edit "toolsets": [...] into the ${name} record of ${file} by hand`,
    );
  for (const [key, shape] of HAND_WRITTEN)
    if (options[key] !== undefined)
      throw new SvcError(
        "usage",
        `unknown option '--${key}': no option sets a subscription's ${key} — edit "${key}": ${shape} into the ${name} record of ${file} by hand (docs/coalescing-and-cron.md, "Dynamic subscriptions")`,
      );
  if (options.profile !== undefined)
    throw new SvcError(
      "usage",
      `unknown option '--profile' — the profile that runs the subscription is --route-profile ${options.profile}`,
    );
}
