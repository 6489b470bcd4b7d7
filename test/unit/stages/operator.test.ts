import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import type { PipelineCtx } from "../../../src/streams/context.js";
import {
  applyStage,
  asyncStageOperator,
  INTERNAL_ERROR,
  stageOperator,
} from "../../../src/streams/stages/operator.js";
import { errorOutcome } from "../../../src/streams/types.js";
import { ctxFor } from "../../helpers/pipelineCtx.js";

const ctx = ctxFor;
const TEAPOT = errorOutcome(418, "teapot");

function scheduler() {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe("stageOperator (marbles)", () => {
  it("applies the stage to open contexts, turns an Outcome into a finished context, and passes finished ones through", () => {
    scheduler().run(({ cold, expectObservable }) => {
      const done = ctx("done", TEAPOT);
      const source = cold("a-b-c|", { a: ctx("pass"), b: ctx("stop"), c: done });
      const stage = (c: PipelineCtx) => (c.inbound.routeName === "stop" ? TEAPOT : { ...c, event: "seen" });
      expectObservable(source.pipe(stageOperator("t", stage))).toBe("a-b-c|", {
        a: { ...ctx("pass"), event: "seen" },
        b: { ...ctx("stop"), outcome: TEAPOT },
        c: done,
      });
    });
  });

  it("a stage that throws answers 500 for that request only; the stream goes on", () => {
    const failures: string[] = [];
    scheduler().run(({ cold, expectObservable }) => {
      const source = cold("a-b|", { a: ctx("boom"), b: ctx("fine") });
      const stage = (c: PipelineCtx) => {
        if (c.inbound.routeName === "boom") throw new Error("bad");
        return c;
      };
      expectObservable(source.pipe(stageOperator("t", stage, (name) => failures.push(name)))).toBe("a-b|", {
        a: { ...ctx("boom"), outcome: INTERNAL_ERROR },
        b: ctx("fine"),
      });
    });
    expect(failures).toEqual(["t"]);
  });

  it("unsubscribes from its source when the subscriber does", () => {
    scheduler().run(({ hot, expectObservable, expectSubscriptions }) => {
      const source = hot("-a-b-c-d", { a: ctx("1"), b: ctx("2"), c: ctx("3"), d: ctx("4") });
      expectObservable(source.pipe(stageOperator("t", (c) => c)), "^--!").toBe("-a-", { a: ctx("1") });
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });
});

describe("asyncStageOperator (marbles)", () => {
  it("keeps at most `concurrency` stage runs in flight and answers each request once", () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const source = hot("abc|", { a: ctx("a"), b: ctx("b"), c: ctx("c") });
      const stage = (c: PipelineCtx) => cold("---x|", { x: { ...c, event: "done" } });
      expectObservable(source.pipe(asyncStageOperator("s", stage, 2))).toBe("---xy-(z|)", {
        x: { ...ctx("a"), event: "done" },
        y: { ...ctx("b"), event: "done" },
        z: { ...ctx("c"), event: "done" },
      });
    });
  });

  it("finished contexts, and those the stage does not apply to, skip it without waiting for a slot", () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const done = ctx("d", TEAPOT);
      const source = hot("ab|", { a: ctx("a"), b: done });
      const stage = (c: PipelineCtx) => cold("--x|", { x: c });
      expectObservable(source.pipe(asyncStageOperator("s", stage, 1))).toBe("-b(x|)", {
        x: ctx("a"),
        b: done,
      });
    });
    scheduler().run(({ cold, hot, expectObservable }) => {
      const source = hot("ab|", { a: ctx("slow"), b: ctx("skip") });
      const stage = (c: PipelineCtx) => cold("--x|", { x: c });
      const applies = (c: PipelineCtx) => c.inbound.routeName !== "skip";
      expectObservable(source.pipe(asyncStageOperator("s", stage, 1, undefined, applies))).toBe("-b(x|)", {
        x: ctx("slow"),
        b: ctx("skip"),
      });
    });
  });

  it("an erroring or empty stage answers 500 and the stream continues", () => {
    scheduler().run(({ cold, hot, expectObservable }) => {
      const source = hot("ab-|", { a: ctx("err"), b: ctx("empty") });
      const stage = (c: PipelineCtx) =>
        c.inbound.routeName === "err"
          ? cold<PipelineCtx>("-#", {}, new Error("x"))
          : cold<PipelineCtx>("--|");
      expectObservable(source.pipe(asyncStageOperator("s", stage, 4))).toBe("-a-(b|)", {
        a: { ...ctx("err"), outcome: INTERNAL_ERROR },
        b: { ...ctx("empty"), outcome: INTERNAL_ERROR },
      });
    });
  });

  it("unsubscribing cancels the stage runs in flight", () => {
    scheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const inner = cold("----x|", { x: ctx("a") });
      const source = hot("a-------", { a: ctx("a") });
      expectObservable(source.pipe(asyncStageOperator("s", () => inner, 1)), "^--!").toBe("---");
      expectSubscriptions(inner.subscriptions).toBe("^--!");
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });
});

describe("applyStage", () => {
  it("does not call the stage for a finished context", () => {
    let called = false;
    const done = ctx("x", TEAPOT);
    expect(
      applyStage(
        "t",
        (c) => {
          called = true;
          return c;
        },
        done,
      ),
    ).toBe(done);
    expect(called).toBe(false);
  });
});
