import { filterKey } from "../config/filtersWrittenAsOne.js";
import { nearMiss } from "../config/nearMiss.js";
import { inProfile, profileFlag } from "../config/paths.js";
import type { Filter } from "../config/sections/filters.js";
import { type Route, routeKey } from "../config/sections/webhook.js";
import { listFileProblem } from "../io/listFiles.js";
import { shebangMismatch } from "../io/scriptShebang.js";
import { resolveScript } from "../io/scripts.js";
import { jobNamesIn, jobsNamed, lookupJob } from "../io/stores/cronJobRecord.js";
import type { CronStore } from "../io/stores/cronStore.js";
import type { RouteTable } from "./routes.js";

export interface ReferenceDeps {
  readonly configFile: string;
  scriptsDir(profile: string): string;
  /** The profile's directory: `in_file` paths are relative to it. */
  profileRoot(profile: string): string;
  cronStore(profile: string): { readonly store: CronStore; readonly path: string };
  /**
   * Why `profile`'s cron store cannot be used as it stands (its directory or its `cron` directory a symbolic
   * link to nothing, a file in its place: `unusableCronStore`); undefined when it can, or is not made yet.
   */
  unusableCronStore(profile: string): string | undefined;
}

/** Every `in_file` in `filters`, with its key path (`filters[0].any[1].in_file`; `filters.in_file` for one mapping). */
function inFiles(filters: readonly Filter[], at: string): Array<{ key: string; path: string }> {
  const found: Array<{ key: string; path: string }> = [];
  const walk = (filter: Filter, key: string): void => {
    if ("not" in filter) walk(filter.not, `${key}.not`);
    else if ("in_file" in filter) found.push({ key: `${key}.in_file`, path: filter.in_file });
    else if ("all" in filter || "any" in filter) {
      const group = "all" in filter ? "all" : "any";
      const list = "all" in filter ? filter.all : filter.any;
      for (const [i, f] of list.entries()) walk(f, `${key}.${group}[${i}]`);
    }
  };
  for (const [i, f] of filters.entries()) walk(f, filterKey(at, filters, i));
  return found;
}

/** A route as its references are checked: `at` names it in a warning (`<file>: <key path>`). */
export interface ReferringRoute {
  readonly at: string;
  readonly route: Pick<Route, "script" | "cron_job" | "filters">;
  readonly profile: string;
}

/**
 * Static routes that name a script, a cron job or an `in_file` list that is not there (or cannot be used): the
 * gateway still starts (the file or job may be added while it runs), but says so now rather than only when
 * the first event is dropped.
 */
export function missingReferenceWarnings(table: RouteTable, deps: ReferenceDeps): Promise<string[]> {
  return referenceWarnings(
    [...table.staticRoutes].map(([name, { route, profile }]) => ({
      at: `${deps.configFile}: ${routeKey(name, route)}`,
      route,
      profile,
    })),
    deps,
  );
}

/** The warnings of `missingReferenceWarnings` for any routes, such as the subscriptions `svc config check` reads. */
export async function referenceWarnings(
  routes: Iterable<ReferringRoute>,
  deps: Omit<ReferenceDeps, "configFile">,
): Promise<string[]> {
  const warnings: string[] = [];
  for (const { at, route, profile } of routes) {
    if (route.script !== undefined) {
      const scriptsDir = deps.scriptsDir(profile);
      const found = await resolveScript(scriptsDir, route.script);
      if ("why" in found) {
        // A path out of the directory (or a directory) never runs however long one waits: "until it is
        // there" is said of a script not found only.
        const until = found.why.startsWith("script not found")
          ? "until it is there"
          : "until script names a file in it";
        warnings.push(
          `${at}.script: ${route.script} — ${found.why} (scripts live in ${scriptsDir}${inProfile(profile)}); ${until} every event on this route is ignored`,
        );
      } else {
        const mismatch = shebangMismatch(found.path, route.script);
        if (mismatch !== undefined)
          warnings.push(`${at}.script: ${route.script}${inProfile(profile)} — ${mismatch}`);
      }
    }
    for (const { key, path } of inFiles(route.filters ?? [], `${at}.filters`)) {
      const { file, problem } = listFileProblem(path, deps.profileRoot(profile));
      if (problem !== undefined)
        warnings.push(
          `${key}: ${path} — ${file} cannot be used (${problem})${inProfile(profile)}; until it can, this filter does not match and the events it decides are ignored`,
        );
    }
    if (route.cron_job !== undefined) {
      const { store, path } = deps.cronStore(profile);
      // Read through a link to nothing, the store is empty, not unreadable: the gateway answers such a
      // profile's events 503, as it does those of a store it cannot read, and so does this warning.
      const unusable = deps.unusableCronStore(profile);
      if (unusable !== undefined) {
        warnings.push(
          `${at}.cron_job: ${route.cron_job} — ${path} cannot be read: ${unusable}; until then every event on this route is answered 503 (the sender retries)`,
        );
      } else
        try {
          const { records } = store.read();
          const found = lookupJob(path, records, route.cron_job);
          if (found === undefined) {
            // A job's name misspelt or in other letters (`Nightly`, ` nightly`) is named, as svc webhook subscribe --cron-job names it.
            const meant = nearMiss(route.cron_job.trim(), jobNamesIn(records));
            const list = `\`svc cron list${profileFlag(profile)}\``;
            const hint =
              meant === undefined ? `(${list})` : `— did you mean ${meant}? (${list} shows the jobs)`;
            warnings.push(
              `${at}.cron_job: ${route.cron_job} — no such job in ${path}${inProfile(profile)} ${hint}; until it exists every event on this route is dropped`,
            );
          } else if (!found.ok)
            warnings.push(
              `${at}.cron_job: ${route.cron_job} — not a valid job: ${found.problems.join("; ")}${inProfile(profile)}; until it is fixed every event on this route is dropped`,
            );
          else if (found.job.state !== "enabled")
            // Paused on purpose, maybe; said as svc webhook subscribe --cron-job says it, since each event is dropped.
            warnings.push(
              `${at}.cron_job: ${route.cron_job} — the job is ${found.job.state}${inProfile(profile)}; until it is resumed (svc cron resume ${route.cron_job}${profileFlag(profile)}) every event on this route is dropped`,
            );
          // Names are unique as svc cron create makes them: a copy edited into the file is never fired by name.
          const namesakes = found === undefined ? [] : jobsNamed(records, route.cron_job);
          if (namesakes.length > 1 && !Object.hasOwn(records, route.cron_job))
            warnings.push(
              `${at}.cron_job: ${route.cron_job} — ${namesakes.length} jobs in ${path}${inProfile(profile)} have this name (${namesakes.join(", ")}); each event fires the first, ${namesakes[0]} — job names are unique: rename the others in the file, or name the job by its id (cron_job: ${namesakes[0]})`,
            );
        } catch (err) {
          warnings.push(
            `${at}.cron_job: ${route.cron_job} — ${path} cannot be read: ${(err as Error).message}${inProfile(profile)}; until it can, every event on this route is answered 503 (the sender retries)`,
          );
        }
    }
  }
  return warnings;
}
