import { createRequire } from "node:module";

/** Real GitHub webhook payloads from @octokit/webhooks-examples, looked up by event and action. */
interface ExampleSet {
  name: string;
  examples: Record<string, unknown>[];
}

// biome-ignore lint/suspicious/noExplicitAny: tests read example payloads by deep dotted access
type Payload = Record<string, any>;

const sets = createRequire(import.meta.url)("@octokit/webhooks-examples") as ExampleSet[];

export function githubExample(event: string, action?: string): Payload {
  const set = sets.find((s) => s.name === event);
  const found = set?.examples.find((e) => action === undefined || e.action === action);
  if (found === undefined)
    throw new Error(`no @octokit/webhooks-examples payload for ${event}/${action ?? "*"}`);
  return structuredClone(found) as Payload;
}
