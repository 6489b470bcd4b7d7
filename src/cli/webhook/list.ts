import { parseSubscription } from "../../io/stores/subscriptions.js";
import { formatTable } from "../format.js";
import { configWithEnabledNote } from "./config.js";
import { withSubscriptionStore } from "./subscriptionStoreFor.js";

/** `svc webhook list`: one row per subscription, never its secret. */
export async function list(): Promise<void> {
  const loaded = configWithEnabledNote();
  const { path, records } = await withSubscriptionStore(loaded, async (store) => ({
    path: store.path,
    records: (await store.read()).records,
  }));
  const entries = Object.entries(records);
  if (entries.length === 0) {
    process.stdout.write(
      "No dynamic subscriptions. Create one: svc webhook subscribe <name> --prompt <text>\n",
    );
    return;
  }
  const rows = entries
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, raw]) => {
      const parsed = parseSubscription(path, name, raw);
      if (!parsed.ok) return [name, "-", "-", "-", "invalid", parsed.problems[0] ?? ""];
      const s = parsed.value;
      const deliver =
        s.cron_job !== undefined ? `cron:${s.cron_job}` : `${s.deliver}${s.deliver_only ? " (direct)" : ""}`;
      return [
        name,
        s.events?.join(",") || "(all)",
        deliver,
        s.profile ?? "default",
        s.enabled ? "yes" : "no",
        s.description ?? "",
      ];
    });
  process.stdout.write(
    `${formatTable([["NAME", "EVENTS", "DELIVER", "PROFILE", "ENABLED", "DESCRIPTION"], ...rows])}\n`,
  );
}
