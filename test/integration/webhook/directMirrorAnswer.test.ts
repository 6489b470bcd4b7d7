import { join } from "node:path";
import { sign } from "@octokit/webhooks-methods";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SessionStore } from "../../../src/io/sessions/store.js";
import { withFileLock } from "../../../src/io/stores/fileLock.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { gatewayPerTest, webhookConfig } from "../../helpers/gateway.js";
import { postJson } from "../../helpers/http.js";

/**
 * A direct delivery's sender waits for its answer (GitHub gives up after 10 s). The answer says whether the
 * message was delivered; mirroring it into the chat's session is best-effort and changes nothing in it, so
 * the answer does not wait for the mirror: a session index held by another writer (a chat front end sharing
 * the data directory) could hold it for the lock's whole 10 s wait.
 */

const SECRET = "direct-mirror-secret";
const CHAT = "-100777";
const perTest = gatewayPerTest();
const fakes: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

async function send(url: string, id: string) {
  const body = JSON.stringify({ ref: "refs/heads/main", head_commit: { message: "fix the parser" } });
  return postJson(url, body, {
    "Content-Type": "application/json",
    "User-Agent": "GitHub-Hookshot/044aadd",
    "X-GitHub-Event": "push",
    "X-GitHub-Delivery": id,
    "X-Hub-Signature-256": await sign(SECRET, body),
  });
}

describe("deliver_only with mirror_to_session", { timeout: 20_000 }, () => {
  it("answers 200 delivered while the session index is locked by another writer; the mirror follows once it is free", async () => {
    const telegram = await startFakeTelegram();
    fakes.push(telegram);
    const gw = await perTest.start({
      config: webhookConfig(
        {
          pushes: {
            secret: SECRET,
            deliver: "telegram",
            deliver_only: true,
            mirror_to_session: true,
            prompt: "Pushed: {head_commit.message}",
            deliver_extra: { chat_id: CHAT },
          },
        },
        {},
        { platforms: { telegram: { enabled: true, token: "123:abc", base_url: telegram.url } } },
      ),
    });
    const store = SessionStore.forProfile(gw.home.dir, undefined);
    await store.openChat("telegram", CHAT);

    // Another writer holds sessions/index.json.lock until it is released.
    let release = () => {};
    const holding = new Promise<void>((resolve) => {
      release = resolve;
    });
    let locked = () => {};
    const taken = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const writer = withFileLock(join(gw.home.dir, "sessions", "index.json"), () => {
      locked();
      return holding;
    });
    await taken;

    const answer = await send(gw.url("/webhooks/pushes"), "8f1f0c1e-0001-4000-8000-000000000001");
    const mirroredWhenAnswered = store.entries(`telegram:${CHAT}`).length;
    release();
    await writer;

    expect(answer).toMatchObject({ status: 200, body: { status: "delivered", route: "pushes" } });
    expect(sentTexts(telegram)).toEqual(["Pushed: fix the parser"]);
    expect(mirroredWhenAnswered).toBe(0);
    await vi.waitFor(() =>
      expect(store.entries(`telegram:${CHAT}`).map((entry) => entry.content)).toEqual([
        "[Webhook delivery: pushes]\nPushed: fix the parser",
      ]),
    );
  });
});
