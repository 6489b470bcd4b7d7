import { describe, expect, it } from "vitest";
import { extraKeyHint } from "../../../src/cli/webhook/checks.js";
import { subscriptionSchema } from "../../../src/io/stores/subscriptions.js";

const record = (raw: Record<string, unknown>) => subscriptionSchema.parse({ secret: "s", ...raw });
const unread = (key: string, target: string) =>
  `/h/config.yaml: platforms.webhook.routes.foo.deliver_extra.${key}: ${target} does not read it (it reads chat_id)`;

/** The line `svc webhook subscribe` prints after its deliver_extra warnings: the command that fixes them. */
describe("extraKeyHint", () => {
  it("a key the target never reads is removed with --deliver-extra <key>= (setting keys leaves it in the record)", () => {
    const sub = record({ deliver: "telegram", deliver_extra: { chatid: "5", chat_id: "6" } });
    expect(extraKeyHint("foo", sub, [unread("chatid", "telegram")])).toBe(
      "Remove it with: svc webhook subscribe foo --deliver-extra chatid=\n",
    );
  });

  it("names each unread key, quoted for the shell where it needs it", () => {
    const sub = record({ deliver: "chat_1", deliver_extra: { "a b": "1", "it's": "2" } });
    expect(extraKeyHint("foo", sub, [unread("a b", "chat_1"), unread("it's", "chat_1")])).toBe(
      "Remove them with: svc webhook subscribe foo --deliver-extra 'a b=' --deliver-extra 'it'\\''s='\n",
    );
  });

  it("a key read only in place of another that is set is removed the same way", () => {
    const sub = record({ deliver: "telegram", deliver_extra: { message_thread_id: "17", thread_id: "99" } });
    const shadowed =
      "/h/config.yaml: platforms.webhook.routes.foo.deliver_extra.thread_id: telegram does not read it while message_thread_id names a thread";
    expect(extraKeyHint("foo", sub, [shadowed])).toBe(
      "Remove it with: svc webhook subscribe foo --deliver-extra thread_id=\n",
    );
  });

  it("a missing key is set: the set hint, alone when nothing is unread", () => {
    const sub = record({ deliver: "forge_comment", deliver_extra: { repo: "o/r" } });
    const missing =
      "/h/config.yaml: platforms.webhook.routes.foo.deliver_extra.pr_number: required for forge_comment — set it";
    expect(extraKeyHint("foo", sub, [missing])).toBe(
      "Set deliver_extra keys with: svc webhook subscribe foo --deliver-extra <key>=<value>\n",
    );
  });

  it("says nothing where the warnings name no deliver_extra key (a cron route, whose job delivers)", () => {
    const sub = record({ deliver: "telegram", cron_job: "nightly", deliver_extra: { chatid: "5" } });
    expect(extraKeyHint("foo", sub, [])).toBe("");
  });
});
