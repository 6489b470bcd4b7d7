import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { jobIdOf } from "../../../src/io/state/redis/sharedQueue.js";
import { seenKey } from "../../../src/streams/stages/idempotency.js";
import { emailPlatform, type FakeSmtp, startFakeSmtp } from "../../fakes/smtp.js";
import { fakeClock } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";
import { startTestRedis, type TestRedis } from "../../helpers/redis.js";
import {
  appendEchoAgent,
  type ClusterNode,
  clusterConfig,
  startNode,
  withPlatform,
} from "../../helpers/redisCluster.js";
import { agentRuns, deliveriesRetrying, linesSaying } from "../../helpers/telegramHandOn.js";

/**
 * docs/delivery-targets.md ("Retries", email) and docs/durability.md, with state.backend: redis: a mail to
 * two recipients whose SMTP server takes it for one and refuses the other for now (452) waits to retry that
 * one; the instance stops (past its drain) meanwhile, and the instance that takes the job over mails the
 * refused recipient alone, not both again. The server is a real `smtp-server` on loopback; the retries wait
 * on the test's clocks.
 */
const OPS = "ops@example.org";
const BUSY = "busy@example.org";
let redis: TestRedis;
let home: TempHome;
let smtp: FakeSmtp;
let port: number;
const nodes: ClusterNode[] = [];
/** The envelope recipients of each mail the server took. */
const received: string[][] = [];
/** How many more times the server refuses BUSY at RCPT TO. */
let refuseBusy = 0;

beforeAll(async () => {
  redis = await startTestRedis();
  home = tempHome();
  smtp = await startFakeSmtp({
    received,
    refuse: (address) => {
      if (address !== BUSY || refuseBusy <= 0) return undefined;
      refuseBusy -= 1;
      return { code: 452, text: "Mailbox full" };
    },
  });
  port = smtp.port;
});
afterAll(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  await smtp.close();
  await redis.cleanup();
  home.cleanup();
});

describe("state.backend: redis — a mail handed on while it waits to retry the recipients refused for now", {
  timeout: 30_000,
}, () => {
  it("is mailed by the next instance to those recipients alone", async () => {
    const prefix = `e${randomUUID()}`;
    const log = join(home.dir, `${randomUUID()}.log`);
    const base = clusterConfig(
      redis.url,
      prefix,
      { mail: { secret: "INSECURE_NO_AUTH", prompt: "event {n}", deliver: "email" } },
      appendEchoAgent(log),
    );
    const cfg = withPlatform(base, "email", emailPlatform(port, `${OPS}, ${BUSY}`));
    const id = jobIdOf(seenKey("mail", "e-1"));
    const connection = new Redis(redis.url);
    const queue = new Queue("runs", { connection, prefix: `${prefix}:bull` });
    refuseBusy = 1;
    try {
      // Its retry waits on a clock that never moves: the stop's drain (0.2 s) ends with the delivery waiting.
      const a = await startNode(cfg, { sleeps: fakeClock(Date.now()), drainTimeoutMs: 200 });
      nodes.push(a);
      const answer = await postJson(a.url("/webhooks/mail"), JSON.stringify({ n: 1 }), {
        "X-Request-Id": "e-1",
      });
      expect(answer.status).toBe(202);
      await vi.waitFor(async () => expect(await deliveriesRetrying(a)).toBe(1), {
        timeout: 10_000,
        interval: 20,
      });
      expect(received).toEqual([[OPS]]);
      await a.stop();

      const job = await queue.getJob(id);
      if (job === undefined) throw new Error(`no job ${id} in Redis`);
      const { retry } = job.data as { retry?: { recipients?: string[]; attempts: number } };
      expect(retry?.recipients).toEqual([BUSY]);
      expect(retry?.attempts).toBe(1);

      const clock = fakeClock(Date.now());
      const b = await startNode(cfg, { sleeps: clock });
      nodes.push(b);
      if ((await queue.getJobState(id)) === "delayed") await job.promote();
      await vi.waitFor(() => expect(linesSaying(b, "handed on")).toHaveLength(1), {
        timeout: 10_000,
        interval: 20,
      });
      // What is left of the 1 s backoff, if anything (the instance took the job before it was due), waited
      // out on the test's clock.
      if (linesSaying(b, "handed on waiting to retry").length > 0) {
        await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1), { timeout: 10_000, interval: 20 });
        clock.advance(1000);
      }
      await vi.waitFor(async () => expect(await queue.getJobState(id)).toBe("completed"), {
        timeout: 10_000,
        interval: 20,
      });
      expect(received).toEqual([[OPS], [BUSY]]);
      expect(linesSaying(b, "handed on")[0]?.msg).toContain(
        `(to ${BUSY} alone; the other recipients got it)`,
      );
      expect(linesSaying(b, "email: delivered for route mail")).toHaveLength(1);
      expect(linesSaying(b, "not delivered to")).toHaveLength(0);
      expect(agentRuns(log)).toEqual(["e-1"]);
    } finally {
      await queue.close();
      connection.disconnect();
    }
  });
});
