import type { RouteTable } from "../actors/routes.js";
import { routeKey } from "../config/sections/webhook.js";
import { canonicalTarget } from "../io/targets/names.js";

/**
 * A static route's `events` entries that can never match (blank, or with spaces at an end), and its keys
 * that its other keys leave without effect, named at startup and by `svc config
 * check` (as `svc webhook subscribe` does for its flags): `deliver_extra` and `mirror_to_session` while
 * the target is `log`; the route's `deliver`, `deliver_extra`, `skills` and `toolsets` on a `cron_job`
 * route, whose job runs with its own target, extras and toolsets, and no skill.
 */
export function idleRouteKeyWarnings(table: RouteTable, file: string): string[] {
  const warnings: string[] = [];
  for (const [name, { route }] of table.staticRoutes) {
    const at = `[webhook] ${file}: ${routeKey(name, route)}`;
    (route.events ?? []).forEach((event, i) => {
      // The event type is never empty, and HTTP strips the ends of the header it comes in.
      if (event.trim() === event && event !== "") return;
      warnings.push(
        `${at}.events[${i}]: ${JSON.stringify(event)} never matches: an event type is ${event.trim() === "" ? "never blank" : "sent without spaces at its ends"} — write ${event.trim() === "" ? "the event type, or remove the entry" : JSON.stringify(event.trim())}`,
      );
    });
    const extras = Object.keys(route.deliver_extra ?? {});
    if (route.cron_job !== undefined) {
      const unused = [
        ...(canonicalTarget(route.deliver) === "log" ? [] : ["deliver"]),
        ...(extras.length > 0 ? ["deliver_extra"] : []),
        ...((route.skills ?? []).length > 0 ? ["skills"] : []),
        ...(route.toolsets === undefined ? [] : ["toolsets"]),
      ];
      if (unused.length > 0)
        warnings.push(
          `${at}: ${unused.join(", ")} ${unused.length === 1 ? "has" : "have"} no effect on a cron_job route — job ${route.cron_job} runs with its own target, extras and toolsets, and no skill (svc cron list); remove ${unused.length === 1 ? "it" : "them"}`,
        );
      continue;
    }
    if (canonicalTarget(route.deliver) !== "log") continue;
    const idle = [
      ...(extras.length > 0 ? ["deliver_extra"] : []),
      ...(route.mirror_to_session ? ["mirror_to_session"] : []),
    ];
    if (idle.length > 0)
      warnings.push(
        `${at}: ${idle.join(" and ")} ${idle.length === 1 ? "has" : "have"} no effect while deliver is log (replies go to the gateway log) — set deliver to a target, e.g. deliver: telegram`,
      );
  }
  return warnings;
}
