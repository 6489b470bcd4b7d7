import { parseSubscription } from "../../io/stores/subscriptions.js";
import { unreadSubscriptionFileWarning } from "../../io/stores/unreadSubscriptionFile.js";
import { shownTarget } from "../../io/targets/names.js";
import { terminalText } from "../../io/terminalText.js";
import { formatTable } from "../format.js";
import { listeningGateway, runningAddress } from "./address.js";
import { failingTargetNotes } from "./checks.js";
import { configWithEnabledNote } from "./config.js";
import { notServed } from "./notServed.js";
import { withSubscriptionStore } from "./subscriptionStoreFor.js";
import { unfiredJobNote } from "./testTarget.js";

/** `svc webhook list`: one row per subscription, never its secret. */
export async function list(): Promise<void> {
  const loaded = await configWithEnabledNote();
  const { path, records } = await withSubscriptionStore(loaded, async (store) => ({
    path: store.path,
    records: (await store.read()).records,
  }));
  const entries = Object.entries(records);
  // With redis, what webhook_subscriptions.json holds that Redis does not (as the gateway's start warns).
  const unread =
    loaded.config.state.backend === "redis"
      ? unreadSubscriptionFileWarning(loaded.paths.subscriptions, Object.keys(records), path)
      : undefined;
  if (unread !== undefined) process.stderr.write(`Warning: ${unread}\n`);
  if (entries.length === 0) {
    process.stdout.write(
      "No dynamic subscriptions. Create one: svc webhook subscribe <name> --prompt <text>\n",
    );
    return;
  }
  const unserved: string[] = [];
  // INSECURE_NO_AUTH is judged by the bind of the gateway that runs (`--host`), as the gateway judges it.
  const running = await runningAddress(loaded);
  const listening = listeningGateway(running) !== undefined;
  const rows = entries
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, raw]) => {
      const parsed = parseSubscription(path, name, raw);
      if (!parsed.ok) return [name, "-", "-", "-", "invalid", parsed.problems[0] ?? ""];
      const s = parsed.value;
      const shadowed = Object.hasOwn(loaded.config.platforms.webhook.routes, name);
      const why = s.enabled && !shadowed ? notServed(loaded, path, name, raw, running) : undefined;
      if (shadowed) unserved.push(`${name}: config.yaml defines a static route of that name, which wins`);
      else if (why !== undefined) unserved.push(`${name} is enabled but not served (404): ${why}`);
      // Served, but its events fire nothing (a cron job paused, disabled, gone or invalid), or every
      // delivery fails (a target that is no target, or a platform not enabled).
      // Not said with the adapter off: this host serves nothing (its note says so), and gateways sharing the
      // records (state.backend: redis) have configs and cron stores of their own — unless this home's gateway
      // runs with it on all the same (started with WEBHOOK_ENABLED=true in its own environment).
      else if (s.enabled && (loaded.config.platforms.webhook.enabled || listening)) {
        for (const note of unfiredJobNote(loaded, name, s, "its events"))
          unserved.push(note.slice("Note: ".length));
        unserved.push(...failingTargetNotes(loaded, name, s));
      }
      const deliver =
        s.cron_job !== undefined
          ? `cron:${s.cron_job}`
          : `${shownTarget(s.deliver)}${s.deliver_only ? " (direct)" : ""}`;
      return [
        name,
        s.events?.join(",") || "(all)",
        deliver,
        s.profile ?? "default",
        s.enabled ? (shadowed || why !== undefined ? "yes, not served" : "yes") : "no",
        s.description ?? "",
      ];
    });
  process.stdout.write(
    `${formatTable([["NAME", "EVENTS", "DELIVER", "PROFILE", "ENABLED", "DESCRIPTION"], ...rows])}\n`,
  );
  for (const line of unserved) process.stderr.write(`Note: ${terminalText(line)}\n`);
}
