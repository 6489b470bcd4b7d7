import { createRequire } from "node:module";

// biome-ignore lint/suspicious/noExplicitAny: tests read example payloads by deep dotted access
export type Payload = Record<string, any>;

/** One event's real GitHub webhook payloads from @octokit/webhooks-examples. */
export interface ExampleSet {
  readonly name: string;
  readonly examples: readonly Payload[];
}

/**
 * Every set, read through Node's `require` (`JSON.parse` of the 4 MB file, once per worker process), not
 * an `import`: the test runner turns the JSON into a 54 MB module with a 22 MB source map, which each worker
 * compiled and then kept to the end of the run (~130 MB, which made every later process it started slower
 * to fork). Shared by every file of a worker: read them, never change them.
 */
export const githubExampleSets = createRequire(import.meta.url)(
  "@octokit/webhooks-examples",
) as readonly ExampleSet[];

/** The payloads of one event (`pull_request`); throws when the package has none. */
export function githubExamplesOf(event: string): readonly Payload[] {
  const set = githubExampleSets.find((s) => s.name === event);
  if (set === undefined) throw new Error(`no @octokit/webhooks-examples payloads for ${event}`);
  return set.examples;
}

/** A copy of the first payload of `event` with `action` (any action when omitted). */
export function githubExample(event: string, action?: string): Payload {
  const found = githubExamplesOf(event).find((e) => action === undefined || e.action === action);
  if (found === undefined)
    throw new Error(`no @octokit/webhooks-examples payload for ${event}/${action ?? "*"}`);
  return structuredClone(found) as Payload;
}
