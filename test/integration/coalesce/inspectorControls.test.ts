import { afterEach, describe, expect, it, vi } from "vitest";
import { createActor, createMachine } from "xstate";
import { startInspector } from "../../../src/actors/inspector.js";
import { onPickedPort } from "../../helpers/http.js";
import { openInspectorClient } from "../../helpers/inspectorClient.js";

/**
 * Inspection events carry payload text, which a terminal WebSocket client (`npx wscat`) prints as it
 * arrives. JSON escapes only C0 controls; the relay escapes the rest of what a terminal acts on or hides
 * (C1 controls, bidi overrides and isolates, zero-width characters, line separators) as `\uXXXX`, so the
 * events mean the same and show as text.
 */
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const HOSTILE = "\u001b[2J \u009b2J \u009d0;pwned\u009c \u202egnp.exe \u2066x\u2069 a\u200bb \u2028 \u007f";
const RAW = /[\u007f-\u009f\u200b\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("--inspect relay: payload text a terminal would act on", () => {
  it("reaches live and late clients \\u-escaped, the JSON value unchanged", async () => {
    const [port, bridge] = await onPickedPort((picked) => startInspector(picked));
    cleanups.push(() => bridge.stop());
    const live = await vi.waitFor(() => openInspectorClient(port), { timeout: 5000, interval: 50 });
    cleanups.push(() => live.socket.terminate());
    const actor = createActor(createMachine({ id: "controls-actor", context: { text: HOSTILE } }), {
      inspect: bridge.inspect,
    }).start();
    cleanups.push(() => actor.stop());
    const carrying = (messages: string[]) => messages.filter((m) => m.includes("pwned"));
    await vi.waitFor(() => expect(carrying(live.messages).length).toBeGreaterThan(0), {
      timeout: 5000,
      interval: 20,
    });
    const late = await openInspectorClient(port);
    cleanups.push(() => late.socket.terminate());
    await vi.waitFor(() => expect(carrying(late.messages).length).toBeGreaterThan(0), {
      timeout: 5000,
      interval: 20,
    });
    for (const message of [...carrying(live.messages), ...carrying(late.messages)]) {
      expect(message).not.toMatch(RAW);
      expect(message).toContain("\\u009b2J");
      expect(message).toContain("\\u202egnp.exe");
    }
    const snapshot = carrying(live.messages)
      .map((m) => JSON.parse(m) as { snapshot?: { context?: { text?: string } } })
      .find((e) => e.snapshot?.context?.text !== undefined);
    expect(snapshot?.snapshot?.context?.text).toBe(HOSTILE);
  });
});
