import { MAX_JSON_DEPTH } from "../../streams/jsonNumbers/index.js";
import { nestedDeeperThan } from "../../streams/nestedDepth.js";

/**
 * The deepest nesting of objects and arrays a tool result may have, the result object itself the first
 * level: the same limit as a webhook payload's. Reading a deeper one is no trouble (JSON.parse reads any
 * depth), but what svc does with it next is recursive — leaving out a content block's `null`s, printing it
 * (`svc mcp call --json`), copying a run's turn, answering a command agent through its endpoint — and some
 * thousands of levels overflowed the stack there ("Maximum call stack size exceeded"). No tool's data needs
 * this many.
 */
export const MAX_RESULT_DEPTH = MAX_JSON_DEPTH;

/** A tool result nested deeper than `MAX_RESULT_DEPTH`: the call fails with this (see `refuseTooDeep`). */
export class ResultTooDeepError extends Error {
  constructor() {
    super(`its result nests objects or arrays deeper than ${MAX_RESULT_DEPTH} levels, more than svc reads`);
    this.name = "ResultTooDeepError";
  }
}

/** Throws `ResultTooDeepError` for a result nested deeper than `MAX_RESULT_DEPTH`, before anything walks it. */
export function refuseTooDeep(result: unknown): void {
  if (nestedDeeperThan(result, MAX_RESULT_DEPTH)) throw new ResultTooDeepError();
}
