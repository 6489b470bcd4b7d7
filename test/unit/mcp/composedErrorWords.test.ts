import { describe, expect, it } from "vitest";
import { redactInspection } from "../../../src/actors/inspector.js";
import {
  ComposedError,
  composedError,
  RefusedAfterInitializeError,
  systemsWords,
} from "../../../src/io/mcp/transportErrors.js";

/**
 * A composed error keeps its text as the system said it, nothing hidden (`systemsWords`), for the hints read
 * from it: an enumerable own property, so a serialisation of the error (JSON.stringify, the inspector relay's
 * redactInspection, which reads Object.entries) carried the secrets its message hides.
 */
describe("a composed error's systemsWords", () => {
  const SECRET = "sk-topsecret-0123456789";
  const failure = new Error(`connect ECONNREFUSED 10.0.0.1:8080 (key ${SECRET})`);

  it.each([
    ["ComposedError", ComposedError],
    ["RefusedAfterInitializeError", RefusedAfterInitializeError],
  ])("%s: read by the hints, never in its keys or a serialisation of it", (_name, Kind) => {
    const err = composedError(
      (quote) => `server/discover failed (${quote.error(failure)})`,
      [SECRET],
      undefined,
      {},
      Kind,
    );
    expect(err.message).not.toContain(SECRET);
    expect(systemsWords(err)).toContain(SECRET);
    expect(Object.keys(err)).not.toContain("systemsWords");
    expect(JSON.stringify(err)).not.toContain(SECRET);
    expect(JSON.stringify(redactInspection({ error: err }))).not.toContain(SECRET);
    expect(JSON.stringify({ ...err })).not.toContain(SECRET);
  });
});
