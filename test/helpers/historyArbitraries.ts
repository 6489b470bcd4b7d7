import fc from "fast-check";
import { historyLine } from "../../src/io/stores/deliveryHistory.js";

/** The moment the history arbitraries date their lines back from. */
export const HISTORY_T0 = Date.parse("2026-11-20T10:00:00Z");
export const historyIso = (at: number) => new Date(at).toISOString();
export const HISTORY_IDS = ["a", "b", "ü€😀", "-"];
export const HISTORY_ROUTES = ["pr", "ci"];

/**
 * History lines of few routes and IDs (so they share keys: retries, runs of another instance's requests,
 * deliveries before their answer): requests of each of `answers`, with or without a payload, `requestAge`
 * seconds before HISTORY_T0; runs and deliveries `recordAge` seconds before it.
 */
export function historyRecordArbs(options: {
  readonly answers: readonly (readonly [number, string])[];
  readonly requestAge: fc.Arbitrary<number>;
  readonly recordAge: fc.Arbitrary<number>;
}): [fc.Arbitrary<string>, fc.Arbitrary<string>] {
  const at = (age: number) => historyIso(HISTORY_T0 - age * 1000);
  const requests = fc
    .record({
      id: fc.constantFrom(...HISTORY_IDS),
      route: fc.constantFrom(...HISTORY_ROUTES),
      answer: fc.constantFrom(...options.answers),
      payload: fc.option(fc.constantFrom('{"n":"é"}', "plain ✓ text"), { nil: undefined }),
      age: options.requestAge,
    })
    .map(({ id, route, answer: [status, outcome], payload, age }) =>
      historyLine({
        kind: "request",
        id,
        at: at(age),
        route,
        status,
        outcome,
        ...(payload === undefined
          ? {}
          : { payload, payload_encoding: payload.startsWith("{") ? ("json" as const) : ("utf8" as const) }),
      }),
    );
  const runsAndDeliveries = fc
    .record({
      kind: fc.constantFrom("run" as const, "delivery" as const),
      id: fc.constantFrom(...HISTORY_IDS),
      route: fc.constantFrom(...HISTORY_ROUTES),
      ok: fc.boolean(),
      age: options.recordAge,
    })
    .map(({ kind, id, route, ok, age }) =>
      historyLine(
        kind === "run"
          ? { kind, id, at: at(age), route, outcome: ok ? "ok" : "failed" }
          : { kind, id, at: at(age), route, platform: "slack", outcome: ok ? "ok" : "failed" },
      ),
    );
  return [requests, runsAndDeliveries];
}
