import { isAbsolute, join } from "node:path";
import { type ReferringRoute, referenceWarnings } from "../../actors/routeReferences.js";
import { routeTable } from "../../actors/routes.js";
import type { WrittenAs } from "../../config/describe.js";
import { unnamedEnvLineWarnings } from "../../config/envFile.js";
import { envNameNearMiss } from "../../config/envNearMiss.js";
import { givenBy } from "../../config/givenValues.js";
import { addVariablesAdvice } from "../../config/interpolate.js";
import type { LoadedConfig } from "../../config/load.js";
import { ConfigInvalidError, howToEnableWebhook, loadConfig } from "../../config/load.js";
import { DEFAULT_PROFILE, profileFlag, svcHome, svcPaths } from "../../config/paths.js";
import {
  profileEnvFileWarnings,
  profileSharedFileWarnings,
  unreadVariableWarnings,
} from "../../config/profileEnv.js";
import { givenProfiles, profileBindingProblem } from "../../config/profileWarnings.js";
import { subscriptionSecretProblem } from "../../config/secretWarnings.js";
import type { McpServerEntry } from "../../config/sections/mcp.js";
import { routeKey, settingKey } from "../../config/sections/webhook.js";
import { disabledServerToolsets, unusedSettingWarnings } from "../../config/unusedSettings.js";
import { nothingToRun, webhookOffReason } from "../../config/webhookEnabled.js";
import { describeError, isSvcError } from "../../errors.js";
import { withStartupProblems } from "../../gateway/config.js";
import { eventWarnings, idleKeys } from "../../gateway/idleRouteKeys.js";
import {
  routeReferenceWarnings,
  staticRouteWarnings,
  unknownToolsetWarnings,
} from "../../gateway/routeWarnings.js";
import { sharedToolPrefixWarnings } from "../../gateway/sharedToolPrefixes.js";
import { startupProblems } from "../../gateway/startupProblems.js";
import {
  allInterfacesWarning,
  unservedRoutesWarning,
  unservedSubscriptionsWarning,
} from "../../gateway/webhookStartupWarnings.js";
import { scrub } from "../../io/credentials.js";
import { dataDirsProblem } from "../../io/dataDirsWritable.js";
import { executableProblem } from "../../io/executable.js";
import { gatewayDirProblem, homeFullProblem, homeProblem } from "../../io/homeWritable.js";
import { listenHostProblem } from "../../io/http/listenProbe.js";
import { logLevelProblem } from "../../io/log.js";
import { entrySecrets, referencedSecrets } from "../../io/mcp/entrySecrets.js";
import { renderEntry } from "../../io/mcp/render.js";
import { tlsConnectOptions } from "../../io/mcp/tlsFetch.js";
import {
  existingProfiles,
  profilesNotListed,
  profilesOnDisk,
  unusableProfileEntries,
} from "../../io/profiles.js";
import {
  configSecretsReadableByOthers,
  secretFiles,
  secretFilesReadableByOthers,
} from "../../io/secretFileModes.js";
import { invalidJobMessage, jobRecords } from "../../io/stores/cronJobRecord.js";
import { cronJobsStored } from "../../io/stores/cronJobsStored.js";
import { cronStore } from "../../io/stores/cronStore.js";
import { HISTORY_FILE, historyDir } from "../../io/stores/deliveryHistory.js";
import { historyDirProblem } from "../../io/stores/historyDirProblem.js";
import { parseSubscription, type Subscription, subscriptionRoute } from "../../io/stores/subscriptions.js";
import { unreadSubscriptionFileWarning } from "../../io/stores/unreadSubscriptionFile.js";
import { unusableCronStore } from "../../io/stores/unusableCronStore.js";
import { canonicalTarget } from "../../io/targets/names.js";
import {
  forgeCommentProgramWarning,
  jobTargetProblems,
  targetStartupProblems,
  targetWarnings,
} from "../../io/targets/validate.js";
import { placesWritableByOthers } from "../../io/writableByOthers.js";
import { journalProblem } from "../../state/gatewayState.js";
import { listenAddress } from "../listenAddress.js";
import { commandLineWarning } from "../mcp/addedCommand.js";
import { notServed } from "../webhook/notServed.js";
import { withSubscriptionStore } from "../webhook/subscriptionStoreFor.js";
import {
  profileMcpVariableWarnings,
  unsetMcpVariables,
  unsetMcpVariablesByEffect,
} from "./unsetVariables.js";

export interface ConfigReport {
  /** What `svc gateway run` would refuse to start with. */
  readonly problems: string[];
  /**
   * A subscription store that cannot be read (not valid JSON, not an object of records): the gateway
   * starts all the same, logs it and serves none of its subscriptions until the store is fixed.
   */
  readonly storeProblems: string[];
  readonly warnings: string[];
  /** One line: adapter, port, routes, subscriptions, MCP servers, agent provider (when it loaded). */
  readonly summary: string | undefined;
}

/** The counts of a loaded configuration, in one line. */
function summarize(loaded: LoadedConfig, subscriptions: number, served: number): string {
  const { config } = loaded;
  const webhook = config.platforms.webhook;
  const servers = Object.values(config.mcp_servers);
  const enabled = servers.filter((s) => s.enabled).length;
  const adapter = webhook.enabled ? `webhook on ${listenAddress(webhook.host, webhook.port)}` : "webhook off";
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  return [
    adapter,
    plural(Object.keys(webhook.routes).length, "route"),
    // A disabled, invalid or shadowed record is counted but not served (the warnings say why).
    `${plural(subscriptions, "subscription")}${served === subscriptions ? "" : ` (${served} served)`}`,
    `${plural(servers.length, "MCP server")}${enabled === servers.length ? "" : ` (${enabled} enabled)`}`,
    `agent ${config.agent.provider}`,
    // Where it looked, as the reload line says it: an SVC_HOME set to the wrong directory shows here.
    loaded.fromFile ? loaded.paths.config : `embedded default (no ${loaded.paths.config})`,
  ].join(", ");
}

/**
 * Everything `svc gateway run` would refuse or warn about, without starting anything: config.yaml and
 * `.env` (syntax, schema, the startup rules, delivery targets), the subscription store's records, and the
 * `${VAR}`s an enabled MCP server needs that are not set.
 */
export async function checkConfig(
  options: { home?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<ConfigReport> {
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig(options);
  } catch (failed) {
    // A schema error, with the startup rules' problems of the routes and sections it leaves checkable,
    // and the scripts and cron jobs those routes name that are not there.
    const err = withStartupProblems(failed);
    const text = isSvcError(err) ? err.message : describeError(err);
    const warnings =
      failed instanceof ConfigInvalidError && failed.checkable !== undefined
        ? await routeReferenceWarnings(
            routeTable(failed.checkable),
            svcPaths(options.home ?? svcHome(options.env ?? process.env)),
          )
        : [];
    return {
      problems: text.split("\n"),
      storeProblems: [],
      warnings: warnings.map((line) => line.replace(/^\[\w+\] /, "")),
      summary: undefined,
    };
  }
  const problems = startupProblems(loaded.config, loaded.paths.config);
  // A file or a link to nothing where the data directory goes: the gateway refuses to start.
  const home = homeProblem(loaded.paths.home, options.env ?? process.env);
  // Nothing under it can be read either: its files' own errors (ENOTDIR, ENOENT) would only repeat this one.
  if (home !== undefined)
    return { problems: [...problems, home], storeProblems: [], warnings: [], summary: undefined };
  // A file where the gateway makes its logs or state directory: it refuses to start, as for SVC_HOME itself.
  const dirs =
    gatewayDirProblem(loaded.paths.home) ??
    journalProblem(loaded.config.state, loaded.paths.home) ??
    dataDirsProblem(loaded.paths.home);
  // One line per problem: each data directory in a loop of links is one.
  if (dirs !== undefined) problems.push(...dirs.split("\n"));
  const full = homeFullProblem(loaded.paths.home);
  if (full !== undefined) problems.push(full);
  // The gateway opens the delivery history before it listens, and refuses to start when it cannot.
  if (loaded.config.platforms.webhook.delivery_history) {
    const history = historyDirProblem(historyDir(loaded.paths.home), HISTORY_FILE);
    if (history !== undefined) problems.push(history);
  }
  // A host name that does not resolve, or an address of another machine: the gateway cannot listen.
  if (loaded.config.platforms.webhook.enabled) {
    const webhook = loaded.config.platforms.webhook;
    const hostKey = settingKey(webhook, "host");
    const listen = await listenHostProblem(webhook.host, hostKey, givenBy(webhook, "host"));
    if (listen !== undefined) problems.push(`${loaded.paths.config}: ${hostKey}: ${listen}`);
  }
  const idle = nothingToRun(loaded, () => cronJobsStored(loaded.paths.home));
  if (idle !== undefined) problems.push(idle);
  // svc gateway run refuses an SVC_LOG_LEVEL it does not know before it reads anything else.
  const level = logLevelProblem(options.env ?? process.env);
  if (level !== undefined) problems.push(level);
  // What the gateway logs at start, without the log line's `[agent] ` / `[webhook] ` tag.
  const untagged = (lines: readonly string[]) => lines.map((line) => line.replace(/^\[\w+\] /, ""));
  const warnings = [
    ...secretFilesReadableByOthers(secretFiles(loaded.paths.home)),
    ...placesWritableByOthers(loaded.paths.home),
    ...(loaded.fromFile
      ? [configSecretsReadableByOthers(loaded.paths.config)].filter((w) => w !== undefined)
      : []),
    ...unnamedEnvLineWarnings(loaded.paths.env),
    ...unreadVariableWarnings(loaded.paths.env, loaded.paths.config, options.env ?? process.env),
    ...profileEnvFileWarnings(loaded.paths.home, profilesOnDisk(loaded.paths.home)),
    ...profileSharedFileWarnings(loaded.paths.home, profilesOnDisk(loaded.paths.home)),
    ...unusableProfileEntries(loaded.paths.home),
    ...untagged(unusedSettingWarnings(loaded.config, loaded.paths.config)),
    ...sharedToolPrefixWarnings(loaded.config.mcp_servers, loaded.paths.config),
    ...targetWarnings(targetStartupProblems(loaded.config, loaded.paths.config)),
  ];
  // As the gateway logs at each start: a listener on every interface (svc gateway start --host overrides it).
  const { webhook } = loaded.config.platforms;
  const exposed = webhook.enabled
    ? allInterfacesWarning(webhook.host, webhook.port, settingKey(webhook, "host"))
    : undefined;
  if (exposed !== undefined) warnings.push(...untagged([exposed]));
  // As the gateway logs at start: config.yaml's routes, unserved while the adapter is off.
  if (!loaded.config.platforms.webhook.enabled) {
    const unserved = unservedRoutesWarning(
      Object.keys(loaded.config.platforms.webhook.routes),
      loaded.paths.config,
      webhookOffReason(loaded),
      howToEnableWebhook(loaded),
      loaded.config.state.backend === "redis",
    );
    if (unserved !== undefined) warnings.push(...untagged([unserved]));
  }
  // Also beside a startup problem of another route: one pass names all there is to fix.
  const routes = staticRouteWarnings(
    routeTable(loaded.config),
    loaded.paths,
    Object.keys(loaded.config.mcp_servers),
    loaded.config.platforms.webhook.enabled,
  );
  warnings.push(...untagged([...routes.now, ...(await routes.references)]));
  let subscriptions = 0;
  let servedCount = 0;
  // Served subscriptions that comment on pull requests (forge_comment), beside config.yaml's routes.
  const commenting: string[] = [];
  const storeProblems: string[] = [];
  // The profiles whose runs connect to the MCP servers with their own .env: routes, subscriptions, cron jobs.
  const bound = new Set(
    Object.values(loaded.config.platforms.webhook.routes).map((route) => route.profile ?? DEFAULT_PROFILE),
  );
  try {
    // With state.backend: redis, the shared hash (an unreachable Redis is a problem: the gateway would not start).
    const { path, records, empty, eviction, persistence } = await withSubscriptionStore(
      loaded,
      async (store) => ({
        path: store.path,
        ...(await store.read()),
        eviction: await store.evictionProblem(),
        persistence: await store.persistenceProblem(),
      }),
    );
    // As the gateway's start warns of them.
    if (eviction !== undefined) warnings.push(`${loaded.paths.config}: state.redis_url: ${eviction}`);
    if (persistence !== undefined) warnings.push(`${loaded.paths.config}: state.redis_url: ${persistence}`);
    if (empty === "emptied")
      warnings.push(emptiedStoreWarning(path, "dynamic subscriptions", "svc webhook subscribe"));
    // As the gateway's start warns: with redis, what webhook_subscriptions.json holds that Redis does not.
    const unread =
      loaded.config.state.backend === "redis"
        ? unreadSubscriptionFileWarning(loaded.paths.subscriptions, Object.keys(records), path)
        : undefined;
    if (unread !== undefined) warnings.push(unread);
    const served: (ReferringRoute & { readonly route: Subscription })[] = [];
    const enabled: string[] = [];
    const profileBinding = {
      multiplex: loaded.config.gateway.multiplex_profiles,
      profiles: profilesOnDisk(loaded.paths.home),
      profilesDir: join(loaded.paths.home, "profiles"),
    };
    for (const [name, raw] of Object.entries(records)) {
      subscriptions += 1;
      const parsed = parseSubscription(path, name, raw);
      // The gateway skips an invalid record with a warning and serves the others.
      if (!parsed.ok) {
        warnings.push(...parsed.problems);
        continue;
      }
      if (parsed.value.enabled) enabled.push(name);
      const ignored = Object.keys(parsed.extra);
      // As the gateway logs at start: keys of a record's own (another tool's "id") are kept, not used.
      if (parsed.value.enabled && ignored.length > 0)
        warnings.push(
          `${path}: ${name}: ignoring fields that are not route properties: ${ignored.join(", ")} (the route is served without them)`,
        );
      if (parsed.value.enabled && Object.hasOwn(loaded.config.platforms.webhook.routes, name))
        warnings.push(
          `${path}: ${name} is enabled but not served: ${loaded.paths.config} has a route of the same name (${routeKey(name, loaded.config.platforms.webhook.routes[name] as object)}), which wins — rename one of them, or svc webhook remove ${name}`,
        );
      else if (parsed.value.enabled) {
        const why = notServed(loaded, path, name, raw);
        if (why !== undefined) warnings.push(`${path}: ${name} is enabled but not served (404): ${why}`);
        else {
          const profile = parsed.value.profile ?? DEFAULT_PROFILE;
          served.push({ at: `${path}: ${name}`, route: parsed.value, profile });
          if (
            parsed.value.cron_job === undefined &&
            canonicalTarget(parsed.value.deliver) === "forge_comment"
          )
            commenting.push(name);
          // As the gateway logs at each load: a binding not enforced, or a likely typo of a profile.
          const binding = profileBindingProblem(name, profile, profileBinding);
          if (binding !== undefined) warnings.push(`${path}: ${name}.profile: ${binding}`);
          const { secret } = parsed.value;
          const problem = secret === undefined ? undefined : subscriptionSecretProblem(secret, name);
          if (problem !== undefined) warnings.push(`${path}: ${name}.secret ${problem}`);
        }
      }
    }
    servedCount = served.length;
    // As the gateway logs at start: with the adapter off, no subscription is served (no listener).
    if (!loaded.config.platforms.webhook.enabled) {
      servedCount = 0;
      const unserved = unservedSubscriptionsWarning(
        enabled,
        path,
        webhookOffReason(loaded),
        howToEnableWebhook(loaded),
        loaded.config.state.backend === "redis",
      );
      if (unserved !== undefined) warnings.push(...untagged([unserved]));
    }
    for (const { profile } of served) bound.add(profile);
    warnings.push(...subscriptionTargetWarnings(loaded, path, served));
    for (const { at, route } of served) {
      // Entries that never match and keys its other keys leave without effect (deliver on a cron
      // route), as for a config.yaml route.
      warnings.push(...eventWarnings(at, route.events ?? []));
      for (const idle of idleKeys(subscriptionRoute(route))) warnings.push(`${at}: ${idle}`);
    }
    warnings.push(
      ...unknownToolsetWarnings(
        served.map(({ at, route }) => ({ at, toolsets: route.toolsets })),
        Object.keys(loaded.config.mcp_servers),
      ),
    );
    for (const { at, route } of served)
      if (route.deliver_only !== true && route.cron_job === undefined)
        for (const problem of disabledServerToolsets(route.toolsets, loaded.config))
          warnings.push(`${at}.toolsets: ${problem}`);
    // A cron job removed (or a script deleted) after the subscription was made: its events are dropped.
    const profile = (name: string) => svcPaths(loaded.paths.home, name);
    warnings.push(
      ...(await referenceWarnings(served, {
        scriptsDir: (name) => profile(name).scripts,
        profileRoot: (name) => profile(name).root,
        cronStore: (name) => ({ store: cronStore(profile(name).cronJobs), path: profile(name).cronJobs }),
        unusableCronStore: (name) => unusableCronStore(loaded.paths.home, name),
      })),
    );
  } catch (err) {
    // An unreachable Redis stops the gateway; a store it cannot parse only costs the subscriptions.
    if (isSvcError(err, "store_corrupt")) storeProblems.push(err.message);
    else problems.push(isSvcError(err) ? err.message : describeError(err));
  }
  for (const [name, entry] of Object.entries(loaded.config.mcp_servers)) {
    if (!entry.enabled) continue;
    const unset = unsetMcpVariables(entry, loaded.scope);
    if (unset.length > 0)
      warnings.push(
        `${loaded.paths.config}: mcp_servers.${name}: ${unset.map((n) => `\${${n}}`).join(", ")} ${unset.length === 1 ? "is" : "are"} not set — ${addVariablesAdvice(unset, `${loaded.paths.env} or the environment`)}${unset.length === 1 ? envNameNearMiss(loaded.paths.env, unset[0] as string) : ""}`,
      );
    // An unset variable of the url or a header fails each connect before anything else (said above); one
    // elsewhere (a client_cert key password) is used as written, and the connect goes on to the rest.
    if (unsetMcpVariablesByEffect(entry, loaded.scope).failing.length === 0) {
      // What the variables render to, as each connect renders them: a url that is no http(s) URL, a
      // header value with a line break. The gateway starts, and this server's every connect fails.
      // So are its TLS files (read at each connect, as https:// uses them): missing, or not what they must be.
      // What a ${VAR} takes from .env is a secret wherever it goes (a path of command), as at each connect.
      let secrets = referencedSecrets(entry, loaded.scope);
      try {
        const rendered = renderEntry(name, entry, loaded.scope);
        secrets = [...entrySecrets(rendered), ...secrets];
        if (/^https:/i.test(rendered.url ?? "")) tlsConnectOptions(name, rendered, entry);
        // A whole command line (`npx -y pkg --api-key <key>`) is named as one, as svc mcp add names it:
        // never looked up (and quoted) as one program name, since a word of it may be a key.
        const line = commandLineWarning(entry.command);
        const missing =
          line === undefined
            ? stdioCommandProblem(
                rendered,
                (options.env ?? process.env).PATH ?? "",
                givenBy(entry, "command"),
              )
            : undefined;
        if (line !== undefined) warnings.push(`${loaded.paths.config}: mcp_servers.${name}.command: ${line}`);
        if (missing !== undefined)
          warnings.push(
            `${loaded.paths.config}: mcp_servers.${name}.command: ${scrub(missing, secrets)} — the gateway starts, but every connect of this server fails: check command (and ${ownPath(rendered) === undefined ? "PATH" : "the entry's env.PATH, which replaces the gateway's PATH for its process"})`,
          );
      } catch (err) {
        if (isSvcError(err, "mcp_connect") || isSvcError(err, "mcp_config"))
          warnings.push(
            `${loaded.paths.config}: ${scrub(err.message, secrets)} — the gateway starts, but every connect of this server fails`,
          );
      }
    }
  }
  const gh = forgeCommentProgramWarning(
    loaded.config,
    loaded.paths.config,
    (options.env ?? process.env).PATH ?? "",
    commenting,
  );
  if (gh !== undefined) warnings.push(gh);
  warnings.push(...cronStoreWarnings(loaded, bound));
  // A profile a `${VAR}` gave is named as config.yaml writes it.
  const profilesGiven = givenProfiles(Object.values(loaded.config.platforms.webhook.routes));
  warnings.push(
    ...profileMcpVariableWarnings(
      loaded.config,
      loaded.paths.home,
      [...bound].sort(),
      options.env,
      (profile) => profilesGiven.get(profile),
    ),
  );
  return { problems, storeProblems, warnings, summary: summarize(loaded, subscriptions, servedCount) };
}

/**
 * Why a stdio server's `command` (a name looked up on PATH — the entry's own `env.PATH` when it sets one, as
 * its process gets it — or an absolute path) cannot be started here; undefined when it can, or when only a
 * start can tell (a relative path, taken from the gateway's working directory; `~`; a variable left unset).
 */
function stdioCommandProblem(entry: McpServerEntry, path: string, given?: WrittenAs): string | undefined {
  const command = entry.command;
  if (command === undefined || command.includes("${") || command.startsWith("~")) return undefined;
  if (command.includes("/") && !isAbsolute(command)) return undefined;
  // One a `${VAR}` gave is named as config.yaml writes it (`given`), whichever variable gave it.
  return executableProblem(command, ownPath(entry) ?? path, given);
}

/** The `env.PATH` a stdio server's process gets instead of the gateway's, when its entry sets one. */
function ownPath(entry: McpServerEntry): string | undefined {
  const own = entry.env?.PATH;
  return own === undefined || own.includes("${") ? undefined : own;
}

/**
 * A store file emptied in place (the gateway serves or schedules nothing from it, and says so only when it
 * had); one made empty (`touch`) holds no records yet, and is not named.
 */
function emptiedStoreWarning(path: string, records: string, create: string): string {
  return `${path} is empty, emptied after svc last wrote it (as jq … file > file leaves it): it holds no ${records} — restore it from a backup, or create them again with ${create}`;
}

/**
 * The cron stores of every profile the gateway schedules: one it cannot read (its jobs are skipped; also one
 * behind a `cron` directory that is a link to nothing, `unusableCronStore`) and
 * records edited by hand into invalid ones (never run nor fired), as the gateway's scheduler logs them.
 * The profiles that hold jobs are added to `withJobs`.
 */
function cronStoreWarnings(loaded: LoadedConfig, withJobs: Set<string>): string[] {
  const warnings: string[] = [];
  let profiles: readonly string[];
  try {
    profiles = existingProfiles(loaded.paths.home);
  } catch (err) {
    // As the gateway's scheduler logs it: the other profiles' jobs are not run.
    warnings.push(profilesNotListed(err));
    profiles = [DEFAULT_PROFILE];
  }
  for (const name of profiles) {
    const store = cronStore(svcPaths(loaded.paths.home, name).cronJobs);
    const flag = profileFlag(name);
    try {
      const { records: stored, empty } = store.read();
      if (empty === "emptied")
        warnings.push(emptiedStoreWarning(store.path, "cron jobs", `svc cron create${flag}`));
      const records = jobRecords(store.path, stored);
      if (records.length > 0) withJobs.add(name);
      // Read through a cron directory that is a link to nothing: no job, though the store is only out of reach.
      const unusable = records.length === 0 ? unusableCronStore(loaded.paths.home, name) : undefined;
      if (unusable !== undefined)
        warnings.push(`${unusable}; the gateway skips this profile's cron jobs until then`);
      for (const record of records) {
        if (!record.ok) {
          warnings.push(
            `${invalidJobMessage(record, `svc cron remove${flag}`)}; the gateway does not run it`,
          );
          continue;
        }
        if (record.lastRunProblem !== undefined) warnings.push(record.lastRunProblem);
        // A target whose platform is off, or that lacks a recipient: every run's delivery fails.
        for (const problem of jobTargetProblems(loaded.config, record.job))
          warnings.push(`${store.path}: jobs.${record.key}.${problem} (cron job ${record.job.name})`);
      }
    } catch (err) {
      // A `cron` directory in a loop of links fails the read with a bare ELOOP: said as the store names it.
      const why = unusableCronStore(loaded.paths.home, name) ?? describeError(err);
      warnings.push(`${why}; the gateway skips this profile's cron jobs until then`);
    }
  }
  return warnings;
}

/**
 * The delivery-target rules that refuse a `config.yaml` route at start (an unknown `deliver`, a platform
 * not enabled, a recipient missing), as they apply to the subscriptions the gateway serves: it serves them
 * all the same, and each event's delivery fails, so they are warnings.
 */
function subscriptionTargetWarnings(
  loaded: LoadedConfig,
  path: string,
  served: readonly { readonly route: Subscription; readonly at: string }[],
): string[] {
  const routes = Object.fromEntries(served.map(({ at, route }) => [at.slice(`${path}: `.length), route]));
  const webhook = { ...loaded.config.platforms.webhook, routes };
  const { unknown, notEnabled, warnings } = targetStartupProblems(
    { ...loaded.config, platforms: { ...loaded.config.platforms, webhook } },
    "",
  );
  // `: platforms.webhook.routes.<name>.deliver...` of config.yaml, said of the record in the store.
  return [...unknown, ...notEnabled, ...warnings].map((problem) =>
    problem.replace(/^: platforms\.webhook\.routes\./, `${path}: `),
  );
}
