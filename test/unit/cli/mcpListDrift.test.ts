import { describe, expect, it } from "vitest";
import { configDriftNote } from "../../../src/cli/mcp/drift.js";

/**
 * `svc mcp list` with a gateway running shows the gateway's live status; a server added to or removed
 * from config.yaml without `svc mcp reload` was shown as if config.yaml said so (added: missing without a
 * word, removed: still listed). The note names both and the command that applies the change.
 */
describe("svc mcp list: config.yaml edited since the gateway loaded it", () => {
  it("names the servers not loaded yet and those no longer configured", () => {
    expect(configDriftNote(["a", "newone"], ["a", "old"])).toBe(
      "(config.yaml has changed since the gateway loaded it — not loaded yet: newone; no longer in config.yaml: old; svc mcp reload applies it)",
    );
    expect(configDriftNote(["a", "b"], ["a"])).toBe(
      "(config.yaml has changed since the gateway loaded it — not loaded yet: b; svc mcp reload applies it)",
    );
  });

  it("says nothing when the names agree, in any order", () => {
    expect(configDriftNote(["a", "b"], ["b", "a"])).toBeUndefined();
    expect(configDriftNote([], [])).toBeUndefined();
  });
});
