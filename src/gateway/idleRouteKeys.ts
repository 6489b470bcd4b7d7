import type { RouteTable } from "../actors/routes.js";
import { DEFAULT_PROFILE, profileFlag } from "../config/paths.js";
import { type ProfileBindingOptions, profileBindingProblem } from "../config/profileWarnings.js";
import { subscriptionSecretProblem } from "../config/secretWarnings.js";
import { type Route, routeKey } from "../config/sections/webhook.js";
import { MAX_TIMER_SECONDS } from "../config/timerSeconds.js";
import { canonicalTarget, isChatPlatform, shownTarget } from "../io/targets/names.js";
import { UNNAMED_EVENT } from "../streams/eventType.js";
import { headerCoalesceKey } from "./headerCoalesceKey.js";
import { eventEdgeProblem, headerFilterWarnings } from "./headerEdgeText.js";

/** A coalesce duration as written, saying when it is the default or past what a timer holds. */
const seconds = (value: number, fallback: number): string =>
  `${value}${value === fallback ? ", the default" : ""}${value > MAX_TIMER_SECONDS ? `, capped at ${MAX_TIMER_SECONDS}` : ""}`;

/**
 * A static route's `events` entries that can never match (blank, with spaces at an end, a `*` wildcard, or two
 * types joined by a comma), and its keys that its other keys leave without effect, named at startup and by
 * `svc config check` (as `svc webhook subscribe` does for its flags): `deliver_extra` and `mirror_to_session` while the target is `log`;
 * `deliver`, `deliver_extra`, `skills` and `toolsets` on a `cron_job` route, whose job runs with its own
 * target, extras and toolsets, and no skill; `skills` and `toolsets` on a `deliver_only` route (no agent runs);
 * `mirror_to_session` with a target that is not a chat (only chat deliveries are mirrored).
 */
export function idleRouteKeyWarnings(table: RouteTable, file: string): string[] {
  return [...table.staticRoutes].flatMap(([name, { route }]) => {
    const at = `[webhook] ${file}: ${routeKey(name, route)}`;
    return [...eventWarnings(at, route.events ?? []), ...idleKeys(route).map((idle) => `${at}: ${idle}`)];
  });
}

/** `events` entries that never match, each as `<at>.events[<i>]: "<entry>" never matches: ...` (also a subscription's). */
export function eventWarnings(at: string, events: readonly string[]): string[] {
  return eventEntryWarnings(events).map((warning) => `${at}.${warning}`);
}

/**
 * `pull_request.opened`: a GitHub event qualified by its action, as GitHub Actions' `on:` and Stripe's dotted
 * names suggest. GitHub (Gitea, Forgejo) sends `pull_request` as the event and `opened` in the body's `action`.
 * Only GitHub's own names with actions: other senders' dotted types (`invoice.paid`) are event types.
 */
const GITHUB_EVENT_WITH_ACTION =
  /^(pull_request(?:_review(?:_comment|_thread)?)?|issues|issue_comment|check_run|check_suite|workflow_run|workflow_job|discussion(?:_comment)?|merge_group)\.([a-z_]+)$/;

/** Why `event` (`pull_request.opened`) never matches a GitHub event, or undefined. */
export function actionQualifiedEventProblem(event: string): string | undefined {
  const qualified = GITHUB_EVENT_WITH_ACTION.exec(event);
  if (qualified === null) return undefined;
  const [, name, action] = qualified;
  return `never matches a GitHub, Gitea or Forgejo event: they send ${name} as the event type and ${action} in the body's action — list ${name} and add a filter {field: action, in: [${action}]}`;
}

/**
 * GitLab's `object_kind` (the body's own name for the event, and the one GitLab's docs and payloads show)
 * against the event type its `X-Gitlab-Event` header sends, which `events` compares. Only the kinds no
 * other sender svc reads names its events so (GitHub's `push`, `release`, `deployment` and Sentry's `issue`
 * are left out).
 */
const GITLAB_OBJECT_KINDS: Readonly<Record<string, string>> = {
  merge_request: "Merge Request Hook",
  tag_push: "Tag Push Hook",
  note: "Note Hook",
  wiki_page: "Wiki Page Hook",
  pipeline: "Pipeline Hook",
  build: "Job Hook",
  feature_flag: "Feature Flag Hook",
  emoji: "Emoji Hook",
  access_token: "Resource Access Token Hook",
};

/** Why `event` (`merge_request`, GitLab's object_kind) matches no GitLab event, or undefined. */
export function gitlabObjectKindProblem(event: string): string | undefined {
  const header = Object.hasOwn(GITLAB_OBJECT_KINDS, event) ? GITLAB_OBJECT_KINDS[event] : undefined;
  if (header === undefined) return undefined;
  return `is the object_kind of GitLab's body, not its event type: GitLab names the event in X-Gitlab-Event as ${JSON.stringify(header)}, so none of its events matches this entry — write ${JSON.stringify(header)} (keep ${JSON.stringify(event)} only for another sender that names its events so)`;
}

/** `events` entries that never match, each as `events[<i>]: "<entry>" never matches: ...`. */
export function eventEntryWarnings(events: readonly string[]): string[] {
  return events.flatMap((event, i) => {
    const entry = `events[${i}]: ${JSON.stringify(event)}`;
    const qualified = actionQualifiedEventProblem(event) ?? gitlabObjectKindProblem(event);
    if (qualified !== undefined) return [`${entry} ${qualified}`];
    // The answers' word for a request that names no event type: inside the gateway such an event has none.
    if (event === UNNAMED_EVENT)
      return [
        `${entry} is what an answer says of a request that names no event type, which has none: an events list never accepts such a request (it is answered {"status":"ignored","event":"${UNNAMED_EVENT}"}) — leave events out for that sender, and select its requests with a filter on a body field`,
      ];
    // `*` (GitHub's hook setting for "every event") or `pull_request.*`: events are compared exactly.
    if (event.includes("*"))
      return [
        `${entry} never matches: events compares the exact event type and has no wildcard — ${event.trim() === "*" ? "leave events out (or empty) to accept every event" : "list each event type, or leave events out and match the type with a filter (field: event, regex: ...)"}`,
      ];
    // Two types written as one (`"push,issues"`): the header names one type, never a list.
    if (event.includes(",")) {
      const types = event
        .split(",")
        .map((type) => type.trim())
        .filter((type) => type !== "");
      return [
        `${entry} never matches: events compares the whole event type, and no sender names one with a comma — write each type as an entry of its own: [${types.map((type) => JSON.stringify(type)).join(", ")}]`,
      ];
    }
    // The event type is never empty, and HTTP strips the ends of the header it comes in.
    if (event.trim() === event && event !== "") {
      const edge = eventEdgeProblem(event);
      return edge === undefined ? [] : [`${entry} ${edge}`];
    }
    const blank = event.trim() === "";
    return [
      `${entry} never matches: an event type is ${blank ? "never blank" : "sent without spaces at its ends"} — write ${blank ? "the event type, or remove the entry" : JSON.stringify(event.trim())}`,
    ];
  });
}

/**
 * What a loaded subscription record `name` is warned about: events entries that never match, idle keys,
 * and (given `binding`, read only for a record bound to a named profile) a profile binding it cannot keep,
 * as for a config.yaml route: not enforced with multiplexing off, or a likely typo of a profile on disk.
 */
export function subscriptionWarnings(
  route: Route,
  name: string,
  binding?: () => ProfileBindingOptions,
): string[] {
  const profile = route.profile ?? DEFAULT_PROFILE;
  const bound =
    binding === undefined || profile === DEFAULT_PROFILE
      ? undefined
      : profileBindingProblem(name, profile, binding());
  const secret = route.secret === undefined ? undefined : subscriptionSecretProblem(route.secret, name);
  return [
    ...(secret === undefined ? [] : [`secret ${secret}`]),
    ...eventEntryWarnings(route.events ?? []),
    ...idleKeys(route),
    ...(bound === undefined ? [] : [bound]),
  ];
}

const have = (keys: readonly string[]) => `${keys.join(", ")} ${keys.length === 1 ? "has" : "have"}`;
const them = (keys: readonly string[]) => (keys.length === 1 ? "it" : "them");

/**
 * What the route's mode leaves unused, as `<keys> have no effect ...` (none: empty); also for a
 * subscription record (`svc webhook subscribe`, `svc config check`). A coalescing quiet window as long
 * as the max wait, or longer, is one: every group fires at its max wait; so is a `headers.*` filter value
 * no header can equal (headerEdgeText.ts).
 */
export function idleKeys(route: Route): string[] {
  const logTarget = canonicalTarget(route.deliver) === "log";
  const extras = Object.keys(route.deliver_extra ?? {}).length > 0 ? ["deliver_extra"] : [];
  const agentKeys = [
    ...((route.skills ?? []).length > 0 ? ["skills"] : []),
    ...(route.toolsets === undefined ? [] : ["toolsets"]),
  ];
  if (route.cron_job !== undefined) {
    const unused = [...(logTarget ? [] : ["deliver"]), ...extras, ...agentKeys];
    return unused.length === 0
      ? headerFilterWarnings(route.filters)
      : [
          ...headerFilterWarnings(route.filters),
          `${have(unused)} no effect on a cron_job route — job ${route.cron_job} runs with its own target, extras and toolsets, and no skill (svc cron list${profileFlag(route.profile)}); remove ${them(unused)}`,
        ];
  }
  const found = headerFilterWarnings(route.filters);
  if (route.deliver_only && agentKeys.length > 0)
    found.push(
      `${have(agentKeys)} no effect on a deliver_only route — no agent runs, the rendered prompt is the message; remove ${them(agentKeys)}`,
    );
  const logOnly = logTarget ? [...extras, ...(route.mirror_to_session ? ["mirror_to_session"] : [])] : [];
  if (logOnly.length > 0)
    found.push(
      `${logOnly.join(" and ")} ${logOnly.length === 1 ? "has" : "have"} no effect while deliver is log (replies go to the gateway log) — set deliver to a target, e.g. deliver: telegram`,
    );
  const coalesce = route.coalesce;
  // `window_seconds: 600` alone: the default max wait (300 s) fires every group first; `max_wait_seconds: 10`
  // alone: the default window (30 s) never ends a group, which the warning says is the default, not written.
  // A window as long as the max wait ends a group at the same moment at the earliest (reason max_wait); two
  // values past what a timer holds are both capped there, so they are equal too. Both 0 (fire at once) is
  // not named.
  if (coalesce !== undefined) {
    const onHeader = headerCoalesceKey(coalesce.key);
    if (onHeader !== undefined) found.push(onHeader);
    const window = Math.min(coalesce.window_seconds, MAX_TIMER_SECONDS);
    const maxWait = Math.min(coalesce.max_wait_seconds, MAX_TIMER_SECONDS);
    if (window > maxWait || (window === maxWait && window > 0))
      found.push(
        `coalesce.window_seconds (${seconds(coalesce.window_seconds, 30)}) has no effect while it is ${window > maxWait ? "longer than" : "as long as"} coalesce.max_wait_seconds (${seconds(coalesce.max_wait_seconds, 300)}) — every group fires at its max wait, counted from its first event; set max_wait_seconds above the quiet window, or shorten the window`,
      );
  }
  if (route.mirror_to_session && !logTarget && !isChatPlatform(route.deliver))
    found.push(
      `mirror_to_session has no effect with deliver: ${shownTarget(route.deliver)} — only chat deliveries are mirrored into a chat's session; remove it`,
    );
  return found;
}
