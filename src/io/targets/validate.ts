import { dirname, join } from "node:path";
import { describe } from "../../config/describe.js";
import { givenBy } from "../../config/givenValues.js";
import { unsetVariablesIn } from "../../config/interpolate.js";
import type { Config } from "../../config/schema.js";
import type { PlatformName } from "../../config/sections/platforms.js";
import { type Route, routeKey } from "../../config/sections/webhook.js";
import { setInProfileEnv } from "../../config/validate.js";
import { executableProblem } from "../executable.js";
import { namesSeveralRecipients } from "./emailRecipients.js";
import { shadowedExtraKeys, unreadExtraKeys } from "./extraKeys.js";
import { canonicalTarget, isChatPlatform, unknownTargetText } from "./names.js";
import { notifyServiceProblem } from "./notifyService.js";
import { qqMissingId, qqMissingIdText } from "./qqChatId.js";

/**
 * `deliver_extra.repo` as `gh --repo` takes it: `owner/name`, or `host/owner/name` for a GitHub
 * Enterprise Server (`ghe.example.com/{repository.full_name}`; a port is allowed after the host).
 */
export const REPO_NAME =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::\d{1,5})?\/)?[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/**
 * `deliver_extra.pr_number` as a delivery takes it: up to 10 digits (leading zeros allowed: `007` is #7),
 * at least 1, spaces around ignored. The startup check and the delivery share it, so neither refuses what
 * the other takes.
 */
export function isPullRequestNumber(value: string): boolean {
  const text = value.trim();
  return /^\d{1,10}$/.test(text) && Number(text) >= 1;
}

/** What a `pr_number` refused for its length alone adds: `12345678901` is digits, so "not a positive integer" misleads. */
export const tooLongNote = (value: string): string =>
  /^\d{11,}$/.test(value.trim()) ? " (more than 10 digits: longer than any pull request number)" : "";

const isTemplate = (value: string) => /\{[^}]+\}/.test(value);

/** A phone number written without its `+` and country code (`555-222-3333`), which Twilio refuses (E.164 only). */
const NATIONAL_NUMBER = /^[\d\s().-]*\d[\d\s().-]*$/;
const NOT_E164 =
  "is no E.164 number — Twilio refuses every delivery to it (error 21211); write it with its + and country code, such as +15552223333";

export interface TargetProblems {
  /** An unknown `deliver` name: refused everywhere. */
  readonly unknown: string[];
  /**
   * A target whose platform is not enabled (a target other than `log` needs its platform
   * enabled; issue 4: such a route is refused at startup with a clear message). `svc webhook subscribe`
   * only warns (the platform may be enabled before the next start); until then a dynamic route's
   * deliveries fail (direct delivery: 502 `Delivery failed`).
   */
  readonly notEnabled: string[];
  /**
   * A target that may not be able to deliver (no recipient, forge_comment without repo or pr_number,
   * which templates or a later config may still supply): logged at startup; such deliveries fail.
   */
  readonly warnings: string[];
}

/** Whether a platform's target exists: enabled in config, or forge_comment whose section does not say (`gh` needs no keys). */
function platformEnabled(platforms: Config["platforms"], name: string): boolean {
  const enabled = (platforms as Record<string, { enabled?: boolean } | undefined>)[name]?.enabled;
  return enabled === undefined ? name === "forge_comment" : enabled;
}

/**
 * Delivery rules checked at startup next to the route rules: every `deliver` names a known target whose
 * platform is enabled (refused otherwise) and has a recipient; forge_comment routes carry `repo` and
 * `pr_number` (warnings). A `cron_job` route delivers nothing itself: only its target's name is checked.
 * One message per problem.
 */
export function targetStartupProblems(
  config: Config,
  file: string,
  /**
   * `false` for a cron job's target: its `deliver_extra` is sent as written (a job has no payload), so a
   * `{template}` is not a way to supply a key but a value that is never filled in.
   */
  { templates = true }: { readonly templates?: boolean } = {},
): TargetProblems {
  const unknown: string[] = [];
  const notEnabled: string[] = [];
  const problems: string[] = [];
  const platforms = config.platforms as Record<
    string,
    { enabled?: boolean; home_channel?: string } | undefined
  >;
  for (const [name, route] of Object.entries(config.platforms.webhook.routes)) {
    const at = `${file}: ${routeKey(name, route)}`;
    const canonical = canonicalTarget(route.deliver);
    // `deliver: ${TARGET}` that nothing sets: naming the variable says more than "unknown target".
    const unset = canonical === undefined ? unsetVariablesIn(route.deliver)[0] : undefined;
    if (unset !== undefined) {
      const env = join(dirname(file), ".env");
      unknown.push(
        `${at}.deliver: \${${unset}} is not set — set ${unset} in ${env} or the environment${setInProfileEnv(file, route.profile, unset, env)}`,
      );
      continue;
    }
    if (canonical === undefined) {
      unknown.push(`${at}.deliver: ${unknownTargetText(route.deliver, givenBy(route, "deliver"))}`);
      continue;
    }
    // A cron_job route's deliver has no effect (the job delivers to its own target; idleRouteKeys warns
    // about it): whether its platform is enabled or it has a recipient decides nothing.
    if (canonical === "log" || route.cron_job !== undefined) continue;
    const settings = platforms[canonical as PlatformName];
    const extra = Object.fromEntries(
      Object.entries(route.deliver_extra ?? {}).map(([k, v]) => [k, String(v)]),
    );
    // A value as a message quotes it: one a `${VAR}` gave as the file writes it, never the value.
    const quotedExtra = (key: string, value: string) => describe(givenBy(route.deliver_extra, key) ?? value);
    const quotedHome = (value: string) => describe(givenBy(settings, "home_channel") ?? value);
    // A key the target never reads is a typo whether or not the platform is enabled yet: `svc webhook
    // subscribe`, which only warns about the platform, says so once, before events arrive.
    for (const unread of unreadExtraKeys(canonical as PlatformName, extra, route.deliver))
      problems.push(`${at}.deliver_extra.${unread}`);
    for (const shadowed of shadowedExtraKeys(canonical as PlatformName, extra, route.deliver, { templates }))
      problems.push(`${at}.deliver_extra.${shadowed.text}`);
    // A job's template, too, is never filled in, enabled or not.
    if (!templates)
      for (const [key, value] of Object.entries(extra))
        if (isTemplate(value))
          problems.push(
            `${at}.deliver_extra.${key}: "${value}" is sent as written — a cron job's deliver_extra is not a template (a job has no payload to fill it from); give the value itself`,
          );
    if (!platformEnabled(config.platforms, canonical)) {
      notEnabled.push(
        `${at}.deliver: ${route.deliver} needs platforms.${canonical} enabled — set platforms.${canonical}.enabled: true with its credentials (see docs/delivery-targets.md), or deliver to log`,
      );
      continue;
    }
    if (canonical === "forge_comment") {
      const repo = extra.repo;
      const pr = extra.pr_number;
      if (repo === undefined)
        problems.push(
          `${at}.deliver_extra.repo: required for forge_comment — set it to owner/name${templates ? " (or a {template})" : ""}`,
        );
      else if (!isTemplate(repo) && !REPO_NAME.test(repo))
        problems.push(
          `${at}.deliver_extra.repo: ${quotedExtra("repo", repo)} is not owner/name (or host/owner/name)`,
        );
      if (pr === undefined)
        problems.push(
          `${at}.deliver_extra.pr_number: required for forge_comment — set it to a number${templates ? " or a template such as {pull_request.number}" : ""}`,
        );
      else if (!isTemplate(pr) && !isPullRequestNumber(pr))
        problems.push(
          `${at}.deliver_extra.pr_number: ${quotedExtra("pr_number", pr)} is not a positive integer${givenBy(route.deliver_extra, "pr_number") === undefined ? tooLongNote(pr) : ""}`,
        );
      continue;
    }
    // A recipient written as spaces alone fails every delivery: a route that names its recipient never
    // falls back to the home channel.
    const recipientKeys = [
      "chat_id",
      ...(canonical === "sms" || canonical === "email" ? ["to"] : []),
      ...(canonical === "home_automation" ? ["service"] : []),
    ];
    const named = recipientKeys.find((key) => extra[key] !== undefined);
    if (named !== undefined && extra[named]?.trim() === "")
      problems.push(
        `${at}.deliver_extra.${named}: blank — every delivery to it fails (a route that names its recipient never falls back to home_channel); set it, or remove it to use platforms.${canonical}.home_channel`,
      );
    // deliver_extra names one address (a payload rendered into it must not add recipients): a list written
    // there is refused at every delivery.
    const address = canonical === "email" && named !== undefined ? extra[named] : undefined;
    if (address !== undefined && !isTemplate(address) && namesSeveralRecipients(address))
      problems.push(
        `${at}.deliver_extra.${named}: names more than one recipient — every delivery to it fails (deliver_extra takes one address); put the list in platforms.email.home_channel`,
      );
    const service = canonical === "home_automation" && named !== undefined ? extra[named] : undefined;
    const serviceProblem =
      service === undefined || isTemplate(service)
        ? undefined
        : notifyServiceProblem(service, givenBy(route.deliver_extra, named ?? ""));
    if (serviceProblem !== undefined)
      problems.push(`${at}.deliver_extra.${named}: ${serviceProblem} — every delivery to it fails`);
    if (canonical === "sms") {
      const number = named === undefined ? settings?.home_channel : extra[named];
      if (number !== undefined && NATIONAL_NUMBER.test(number.trim()))
        problems.push(
          named === undefined
            ? `${at}.deliver: sms delivers to platforms.sms.home_channel ${quotedHome(number.trim())}, which ${NOT_E164}`
            : `${at}.deliver_extra.${named}: ${quotedExtra(named, number.trim())} ${NOT_E164}`,
        );
    }
    if (canonical === "qqbot") {
      const chatId = named === undefined ? settings?.home_channel?.trim() : extra[named]?.trim();
      const missing = chatId === undefined ? undefined : qqMissingId(chatId);
      if (missing !== undefined)
        problems.push(
          named === undefined
            ? `${at}.deliver: qqbot delivers to platforms.qqbot.home_channel ${quotedHome(chatId ?? "")}, which ${qqMissingIdText(missing, "every delivery to it fails")}`
            : `${at}.deliver_extra.${named}: ${quotedExtra(named, chatId ?? "")} ${qqMissingIdText(missing, "every delivery to it fails")}`,
        );
    }
    const chatLike = isChatPlatform(canonical) || canonical === "sms" || canonical === "email";
    // A Discord thread is a channel of its own: thread_id alone names where to post.
    const recipient =
      extra.chat_id ??
      (canonical === "sms" || canonical === "email" ? extra.to : undefined) ??
      (canonical === "discord" ? (extra.thread_id ?? extra.message_thread_id) : undefined);
    // A blank home channel (`home_channel: ${HOME}` with `HOME=` in .env) is none: deliveries fail alike.
    const home = settings?.home_channel;
    if (chatLike && recipient === undefined && (home === undefined || home.trim() === "")) {
      problems.push(
        `${at}.deliver_extra.chat_id: missing and platforms.${canonical}.home_channel is ${home === undefined ? "not set" : "blank"} — set one of them${canonical === "sms" || canonical === "email" ? " (or deliver_extra.to)" : canonical === "discord" ? " (or deliver_extra.thread_id: a thread is a channel of its own)" : ""} so ${route.deliver} knows where to deliver`,
      );
    }
  }
  return { unknown, notEnabled, warnings: problems };
}

/**
 * A cron job's target problems (its `deliver` and `deliver_extra`, sent as written) under the current
 * config.yaml, each as `deliver...: <problem>`: the caller names the store and job. `svc cron create`
 * warns about them once; a platform turned off since (or never turned on) fails every run's delivery.
 */
export function jobTargetProblems(
  config: Config,
  job: { readonly deliver: string; readonly deliver_extra: Readonly<Record<string, string>> },
): string[] {
  // The log reads no key (`svc cron create --deliver-extra` without --deliver says so once): a job edited
  // by hand is named at start and by svc config check, as a config.yaml route with extras and log is.
  if (canonicalTarget(job.deliver) === "log" && Object.keys(job.deliver_extra).length > 0)
    return [
      "deliver_extra: has no effect while the job delivers to log (the log reads no key) — remove it from the job, or set the job's deliver to a target",
    ];
  const route = { deliver: job.deliver, deliver_extra: job.deliver_extra } as Route;
  return routeTargetProblems(config, route, { templates: false });
}

/**
 * One route's target problems (what refuses a config.yaml route at start, and what is warned about) under
 * the current config.yaml, each as `deliver...: <problem>`: the caller names the route. A served
 * subscription's are warned about at each load of the store: its deliveries fail until they are fixed.
 */
export function routeTargetProblems(
  config: Config,
  route: Route,
  options: { readonly templates?: boolean } = {},
): string[] {
  const webhook = { ...config.platforms.webhook, routes: { route } };
  const { unknown, notEnabled, warnings } = targetStartupProblems(
    { ...config, platforms: { ...config.platforms, webhook } },
    "",
    options,
  );
  const at = `: ${routeKey("route", route)}.`;
  return [...unknown, ...notEnabled, ...warnings].map((problem) =>
    problem.startsWith(at) ? problem.slice(at.length) : problem,
  );
}

/** What stops the gateway from starting (and a reload from applying): unknown targets and targets whose platform is not enabled. */
export function refusedTargets(problems: TargetProblems): string[] {
  return [...problems.unknown, ...problems.notEnabled];
}

/** What the gateway logs as warnings at startup and reload: targets that may not be able to deliver. */
export function targetWarnings(problems: TargetProblems): string[] {
  return [...problems.warnings];
}

/**
 * `svc config check`: the `gh` (`platforms.forge_comment.command`) that routes of config.yaml (and the served
 * `subscriptions` named) deliver with,
 * when it cannot be started here — not on PATH, a path to nothing. The gateway checks it at start only with
 * `enabled: true` (its credentials check); without that, each comment would fail at its first event.
 */
export function forgeCommentProgramWarning(
  config: Config,
  file: string,
  path = process.env.PATH ?? "",
  subscriptions: readonly string[] = [],
): string | undefined {
  const settings = (config.platforms as Record<string, { enabled?: boolean; command?: string } | undefined>)
    .forge_comment;
  if (settings?.enabled === false) return undefined;
  const routes = Object.entries(config.platforms.webhook.routes)
    .filter(([, route]) => route.cron_job === undefined && canonicalTarget(route.deliver) === "forge_comment")
    .map(([name]) => name)
    .concat(subscriptions.filter((name) => !Object.hasOwn(config.platforms.webhook.routes, name)));
  if (routes.length === 0 && settings?.enabled !== true) return undefined;
  const command = settings?.command ?? "gh";
  if (command.includes("${")) return undefined;
  // A command a `${VAR}` gave is named as config.yaml writes it.
  const problem = executableProblem(
    command,
    path,
    settings === undefined ? undefined : givenBy(settings, "command"),
  );
  if (problem === undefined) return undefined;
  const fix = command.includes("/")
    ? "set platforms.forge_comment.command to the gh executable"
    : 'install the GitHub CLI and run "gh auth login", or set platforms.forge_comment.command to where gh is';
  const who =
    routes.length === 0
      ? "platforms.forge_comment is enabled"
      : `route${routes.length === 1 ? "" : "s"} ${routes.join(", ")} deliver${routes.length === 1 ? "s" : ""} to forge_comment`;
  return `${file}: platforms.forge_comment.command: ${problem} — ${who}, and every pull-request comment fails until it can be started: ${fix}`;
}
