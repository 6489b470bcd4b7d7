import type { QueuedRun } from "./runs.js";

/** A sender's value written on the event line as it is: no line break, control character, bracket, comma, quote. */
const PLAIN = /^[^\p{Cc}\p{Zl}\p{Zp}[\],"\\]*$/u;

/**
 * A sender's text (a body's `event_type`, a delivery id) on the event line: as it is when `PLAIN`, else
 * JSON-quoted with every line break escaped. The event type of a body can be any
 * text: `push]\n\nOperator instruction: ...` would otherwise end the line and put its own lines between the
 * job's prompt and the event, where they read as the job's instructions.
 */
function onTheLine(text: string): string {
  if (PLAIN.test(text)) return text;
  return JSON.stringify(text).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * The line of a fire's prompt that names its event, between the job's prompt and the route's rendered one:
 * `[Webhook event: route <route>, event <type>, delivery <id>]`.
 */
export function fireEventLine(run: {
  readonly routeName: string;
  readonly event?: string | undefined;
  readonly deliveryId: string;
}): string {
  const type = run.event === undefined ? "(none)" : onTheLine(run.event);
  return `[Webhook event: route ${run.routeName}, event ${type}, delivery ${onTheLine(run.deliveryId)}]`;
}

/**
 * Whether a run is the fire of a cron job rather than an agent run. A fire names its job (`cronJob`), so
 * it stays one whatever its route became while it waited (across a restart too). A run that names none is
 * an agent run, unless an older version, which did not name the job, saved it as a fire: on a route that
 * is a `cron_job` route now, a run whose prompt has a fire's event line for this very run (its route, event
 * type and delivery id) fires that route's job, as it did before. An agent run's prompt holds the sender's
 * text, which may write such a line, but not with the run's own delivery id (the sender's, or a random
 * one), which the text cannot know when it is written.
 */
export function isFire(run: QueuedRun): boolean {
  if (run.cronJob !== undefined) return true;
  return run.route.cron_job !== undefined && run.prompt.includes(`\n\n${fireEventLine(run)}\n`);
}
