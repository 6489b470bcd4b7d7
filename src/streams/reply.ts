import type { Inbound, Outcome } from "./types.js";

/**
 * How the stream's answer leaves it: the HTTP adapters' reply (`io/http/core.ts`, whose second argument
 * asks to close the connection: the stream never does, the body was read) with `refusal`, why a stage
 * refused the request, for the delivery history (never sent).
 */
export type SendAnswer = (answer: Outcome, close?: undefined, refusal?: string) => void;

/**
 * A request's way back to its sender, carried in the request's own context through every stage: the
 * stream answers through it once the last stage is done, so no table keyed by request is needed. It
 * answers exactly once (a second answer is ignored). One still unanswered when `push` returns (an
 * asynchronous stage holds it) joins `OpenReplies`, only so that a stream that breaks (unreachable:
 * every stage catches) can still answer it; one answered inside `push` never touches that list.
 */
export class Reply {
  /** `OpenReplies` links, set only while listed. */
  prev: Reply | undefined;
  next: Reply | undefined;
  private answered = false;
  private listed = false;

  constructor(
    readonly inbound: Inbound,
    private readonly send: SendAnswer,
    private readonly open: OpenReplies,
  ) {}

  /**
   * Sends `outcome` unless this request was already answered; throws what the writer throws. `refusal`:
   * why a stage refused the request (`PipelineCtx.refusal`), passed along for the delivery history.
   */
  answer(outcome: Outcome, refusal?: string): void {
    if (this.answered) return;
    this.answered = true;
    if (this.listed) {
      this.listed = false;
      this.open.remove(this);
    }
    this.send(outcome, undefined, refusal);
  }

  /** Joins the unanswered list unless already answered (called once `push` has returned from the stream). */
  keepIfUnanswered(): void {
    if (this.answered || this.listed) return;
    this.listed = true;
    this.open.add(this);
  }
}

/** The requests pushed and not yet answered, oldest first: an intrusive doubly linked list (no hashing). */
export class OpenReplies {
  private first: Reply | undefined;
  private last: Reply | undefined;
  private count = 0;

  add(reply: Reply): void {
    reply.prev = this.last;
    reply.next = undefined;
    if (this.last === undefined) this.first = reply;
    else this.last.next = reply;
    this.last = reply;
    this.count += 1;
  }

  remove(reply: Reply): void {
    if (reply.prev === undefined) this.first = reply.next;
    else reply.prev.next = reply.next;
    if (reply.next === undefined) this.last = reply.prev;
    else reply.next.prev = reply.prev;
    reply.prev = undefined;
    reply.next = undefined;
    this.count -= 1;
  }

  size(): number {
    return this.count;
  }

  /** Every unanswered request, oldest first (a snapshot: answering them while iterating is safe). */
  all(): Reply[] {
    const out: Reply[] = [];
    for (let r = this.first; r !== undefined; r = r.next) out.push(r);
    return out;
  }
}
