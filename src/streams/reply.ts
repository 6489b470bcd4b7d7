import type { Inbound, Outcome } from "./types.js";

/**
 * A request's way back to its sender, carried in the request's own context through every stage: the
 * last stage answers through it, so no table keyed by request is needed. Each one answers exactly once
 * (a second answer is ignored). The ones still unanswered when `push` returns (an asynchronous stage
 * holds them) join a list, only so that a stream that breaks (unreachable: every stage catches) can
 * still answer them all; one answered inside `push` never touches it.
 */
export class Reply {
  private prev: Reply | undefined;
  private next: Reply | undefined;
  private answered = false;
  private listed = false;

  constructor(
    readonly inbound: Inbound,
    private readonly send: (outcome: Outcome) => void,
    private readonly open: OpenReplies,
  ) {}

  /** Sends `outcome` unless this request was already answered; throws what the writer throws. */
  answer(outcome: Outcome): void {
    if (this.answered) return;
    this.answered = true;
    if (this.listed) {
      this.listed = false;
      this.open.remove(this);
    }
    this.send(outcome);
  }

  /** Joins the unanswered list unless already answered (called once `push` has returned from the stream). */
  keepIfUnanswered(): void {
    if (this.answered || this.listed) return;
    this.listed = true;
    this.open.add(this);
  }

  /** @internal list links, for `OpenReplies` only. */
  static link(reply: Reply, prev: Reply | undefined, next: Reply | undefined): void {
    reply.prev = prev;
    reply.next = next;
  }
  static prevOf(reply: Reply): Reply | undefined {
    return reply.prev;
  }
  static nextOf(reply: Reply): Reply | undefined {
    return reply.next;
  }
}

/** The requests pushed and not yet answered: an intrusive doubly linked list (O(1), no hashing). */
export class OpenReplies {
  private head: Reply | undefined;
  private count = 0;

  add(reply: Reply): void {
    Reply.link(reply, undefined, this.head);
    if (this.head !== undefined) Reply.link(this.head, reply, Reply.nextOf(this.head));
    this.head = reply;
    this.count += 1;
  }

  remove(reply: Reply): void {
    const prev = Reply.prevOf(reply);
    const next = Reply.nextOf(reply);
    if (prev === undefined) this.head = next;
    else Reply.link(prev, Reply.prevOf(prev), next);
    if (next !== undefined) Reply.link(next, prev, Reply.nextOf(next));
    Reply.link(reply, undefined, undefined);
    this.count -= 1;
  }

  size(): number {
    return this.count;
  }

  /** Every unanswered request, oldest last (a snapshot: answering one while iterating is safe). */
  all(): Reply[] {
    const out: Reply[] = [];
    for (let r = this.head; r !== undefined; r = Reply.nextOf(r)) out.push(r);
    return out;
  }
}
