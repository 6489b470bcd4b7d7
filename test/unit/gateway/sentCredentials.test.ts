import { describe, expect, it } from "vitest";
import { sentCredentialsLedger } from "../../../src/gateway/sentCredentials.js";

const A = "token-aaaaaaaa-1";
const B = "token-bbbbbbbb-2";
const C = "token-cccccccc-3";

describe("what the MCP servers send, as the runs hide it", () => {
  it("is what is sent now while no run is under way", () => {
    const ledger = sentCredentialsLedger();
    ledger.set([A]);
    expect(ledger.list()).toEqual([A]);
    ledger.set([B]);
    expect(ledger.list()).toEqual([B]);
  });

  it("keeps a value that went while a run that began before was under way, until that run ends", () => {
    const ledger = sentCredentialsLedger();
    ledger.set([A]);
    const release = ledger.hold();
    ledger.set([B]);
    expect([...ledger.list()].sort()).toEqual([A, B]);
    // Replaced again during the run: the value between is kept too.
    ledger.set([C]);
    expect([...ledger.list()].sort()).toEqual([A, B, C]);
    release();
    expect(ledger.list()).toEqual([C]);
    // Let go once: a second call changes nothing.
    const other = ledger.hold();
    ledger.set([A]);
    release();
    expect([...ledger.list()].sort()).toEqual([A, C]);
    other();
    expect(ledger.list()).toEqual([A]);
  });

  it("lets a value go once every run that began before it went has ended, whatever runs began since", () => {
    const ledger = sentCredentialsLedger();
    ledger.set([A]);
    const first = ledger.hold();
    ledger.set([B]);
    // Began after A went: it does not keep A.
    const second = ledger.hold();
    ledger.set([C]);
    first();
    expect([...ledger.list()].sort()).toEqual([B, C]);
    second();
    expect(ledger.list()).toEqual([C]);
  });

  it("gives the same frozen list while nothing changed, and a value sent again is no longer kept apart", () => {
    const ledger = sentCredentialsLedger();
    ledger.set([A, B]);
    const list = ledger.list();
    expect(Object.isFrozen(list)).toBe(true);
    ledger.set([A, B]);
    expect(ledger.list()).toBe(list);
    const release = ledger.hold();
    ledger.set([B]);
    ledger.set([A, B]);
    const again = ledger.list();
    release();
    expect(ledger.list()).toEqual([A, B]);
    expect(ledger.list()).toBe(again);
  });
});
