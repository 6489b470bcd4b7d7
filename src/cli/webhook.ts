import { type Command, Option } from "commander";
import { collectPairs } from "./format.js";
import { SECRET_FILE_HELP } from "./secretOption.js";
import { unquotedValueError } from "./unquotedValue.js";
import { change } from "./webhook/change.js";
import { deliveries } from "./webhook/deliveries.js";
import { list } from "./webhook/list.js";
import { redeliver } from "./webhook/redeliver.js";
import { sendTest } from "./webhook/sendTest.js";
import { subscribe } from "./webhook/subscribe.js";

export { subscriptionUrl } from "./webhook/address.js";
export { signGenericV2 } from "./webhook/signGenericV2.js";

/** What `svc webhook subscribe` shows in quotes for a value given as several words (`--prompt Review {title}`). */
const SUBSCRIBE_EXAMPLES: Readonly<Record<string, string>> = {
  "--prompt": '"Review {pull_request.title}"',
  "--description": '"Reviews for the web team"',
};

/** `svc webhook ...`: dynamic subscriptions in $SVC_HOME/webhook_subscriptions.json. */
export function registerWebhookCommands(program: Command): void {
  const webhook = program.command("webhook").description("dynamic webhook subscriptions");
  const subscribeCommand = webhook
    .command("subscribe <name>")
    // The short names other agent gateways' `webhook` commands accept.
    .alias("add")
    .description("create or update a subscription; prints its URL and secret")
    .option(
      "--events <list>",
      "comma-separated event types, or the option repeated (default: all)",
      // Repeated `--events a --events b` adds up instead of keeping only the last one; each as given.
      (value: string, previous?: string[]) => [...(previous ?? []), value],
    )
    .option("--prompt <template>", "prompt template with {dot.path} fields")
    .option("--deliver <target>", "delivery target (default log)")
    .option("--deliver-chat-id <id>", "deliver_extra.chat_id for chat targets")
    .option(
      "--deliver-extra <key=value>",
      "deliver_extra key, e.g. repo=owner/name, pr_number={number} (repeatable; key= removes it)",
      collectPairs,
    )
    .option("--deliver-only", "no agent: the rendered prompt is the message")
    .option("--no-deliver-only", "an agent run again (after --deliver-only)")
    .option("--cron-job <id-or-name>", "fire this cron job on each event")
    .option("--no-cron-job", "stop firing the cron job: an agent run again")
    .option("--description <text>", "what this subscription is for")
    .option("--route-profile <profile>", "profile that runs the route (rebinding rotates the secret)")
    .option("--secret <secret>", "use this secret instead of a generated one (- reads it from stdin)")
    .option("--secret-file <path>", SECRET_FILE_HELP)
    .option("--mirror-to-session", "write chat deliveries into the chat's session")
    .option("--no-mirror-to-session", "stop mirroring")
    // Not options: refused with what to do instead (see checkNotOptions).
    .addOption(new Option("--toolsets <list>").hideHelp())
    .addOption(new Option("--skills <list>").hideHelp())
    .addOption(new Option("--filters <json>").hideHelp())
    .addOption(new Option("--script <path>").hideHelp())
    .addOption(new Option("--coalesce <key>").hideHelp())
    .addOption(new Option("--profile <profile>").hideHelp())
    .action(subscribe);
  // A prompt or description may hold a secret: its stray words are counted, not shown.
  subscribeCommand.configureOutput({
    outputError: (text, write) =>
      write(unquotedValueError(text, subscribeCommand, SUBSCRIBE_EXAMPLES, new Set())),
  });
  webhook.command("list").alias("ls").description("list subscriptions (no secrets)").action(list);
  webhook
    .command("remove <name>")
    // `unsubscribe`, the opposite of `subscribe`: unknown, it was answered "Did you mean subscribe?",
    // the command that makes the subscription again.
    .aliases(["rm", "unsubscribe"])
    .description("remove a subscription (or: unsubscribe)")
    .action((name: string) => change(name, "remove"));
  webhook
    .command("enable <name>")
    // svc cron's names for the same switch: unknown, `resume` was answered "Did you mean remove?".
    .alias("resume")
    .description("enable a subscription")
    .action((name: string) => change(name, "enable"));
  webhook
    .command("disable <name>")
    .alias("pause")
    .description("disable a subscription (the gateway answers 404)")
    .action((name: string) => change(name, "disable"));
  webhook
    .command("test <name>")
    .description(
      "send a signed test event to a dynamic subscription on the running gateway (config.yaml routes are not read)",
    )
    .option("--payload <json>", "request body (default: a small test event)")
    .option(
      "--event <type>",
      "event type header (default: the payload's event type as the gateway reads it — event_type, else type, webhookEvent, eventType — else the first of the route's events, else test)",
    )
    .option("--port <port>", "gateway port (default: the running gateway's, else platforms.webhook.port)")
    .action(sendTest);
  webhook
    .command("deliveries [route]")
    .alias("history")
    .description(
      "recent requests to the routes, newest first: time, delivery ID, route, event, answer, run, delivery, note (redelivery of <id>)",
    )
    .option("--limit <n>", "how many (default 20)")
    .option(
      "--status <s>",
      "only answers of this HTTP status (401), class (4xx) or outcome (accepted, ignored, ...)",
    )
    .option("--id <delivery-id>", "only this delivery ID")
    .option("--since <time>", "only from this time (2026-12-01T12:00:00Z, 2026-12-01, or ago: 30m, 2h, 7d)")
    .option("--until <time>", "only up to this time (same forms as --since)")
    .option("--route <name>", "only this route (as the [route] argument)")
    .option(
      "--before <delivery-id>",
      "only the rows listed after this delivery's (the next page, where more rows share a time than --limit shows)",
    )
    .option(
      "--skip <n>",
      "leave out the first n rows that match (with --before: the rows after it shown already)",
    )
    .option("--json", "print them as JSON")
    .action(deliveries);
  webhook
    .command("redeliver <delivery-id>")
    .description(
      "send a recorded event again, with its original payload, to its route on the running gateway",
    )
    .option("--route <name>", "the route, when the delivery ID reached several")
    .option("--port <port>", "gateway port (default: the running gateway's)")
    .action(redeliver);
}
