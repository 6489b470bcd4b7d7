import { delay, map, mergeMap } from "rxjs";
import { TestScheduler } from "rxjs/testing";
import { describe, expect, it } from "vitest";
import type { PipelineCtx } from "../../../src/streams/context.js";
import { onlyFor } from "../../../src/streams/stages/onlyFor.js";
import { ctxFor } from "../../helpers/pipelineCtx.js";

const ctx = (routeName: string, event?: string): PipelineCtx =>
  event === undefined ? ctxFor(routeName) : { ...ctxFor(routeName), event };
const slow = (c: PipelineCtx) => c.inbound.routeName.startsWith("slow");
const mark = map((c: PipelineCtx) => ({ ...c, event: "done" }));

function scheduler() {
  return new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
}

describe("onlyFor (marbles)", () => {
  it("applies the operator to the picked contexts and passes the others on at once", () => {
    scheduler().run(({ hot, expectObservable }) => {
      const source = hot("abc|", { a: ctx("slow-a"), b: ctx("fast"), c: ctx("slow-c") });
      expectObservable(source.pipe(onlyFor(slow, (s) => s.pipe(mark, delay(2))))).toBe("-bx-(y|)", {
        b: ctx("fast"),
        x: ctx("slow-a", "done"),
        y: ctx("slow-c", "done"),
      });
    });
  });

  it("completes only once the operator is done with what it was given", () => {
    scheduler().run(({ hot, expectObservable }) => {
      const source = hot("a|", { a: ctx("slow") });
      expectObservable(source.pipe(onlyFor(slow, (s) => s.pipe(mark, delay(4))))).toBe("----(x|)", {
        x: ctx("slow", "done"),
      });
    });
  });

  it("passes a source error on", () => {
    scheduler().run(({ hot, expectObservable }) => {
      const source = hot("a#", { a: ctx("fast") }, new Error("broken"));
      expectObservable(source.pipe(onlyFor(slow, mark))).toBe("a#", { a: ctx("fast") }, new Error("broken"));
    });
  });

  it("errors when choosing throws", () => {
    scheduler().run(({ hot, expectObservable }) => {
      const source = hot("a", { a: ctx("x") });
      const boom = new Error("cannot choose");
      const picks = () => {
        throw boom;
      };
      expectObservable(source.pipe(onlyFor(picks, mark))).toBe("#", undefined, boom);
    });
  });

  it("unsubscribing unsubscribes the source and what the operator holds", () => {
    scheduler().run(({ cold, hot, expectObservable, expectSubscriptions }) => {
      const inner = cold("----x|", { x: ctx("slow") });
      const source = hot("a-------", { a: ctx("slow") });
      expectObservable(
        source.pipe(
          onlyFor(
            slow,
            mergeMap(() => inner),
          ),
        ),
        "^--!",
      ).toBe("---");
      expectSubscriptions(inner.subscriptions).toBe("^--!");
      expectSubscriptions(source.subscriptions).toBe("^--!");
    });
  });
});
