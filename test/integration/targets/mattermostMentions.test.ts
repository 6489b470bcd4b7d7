import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * Spec 5 rule 6: payload text is untrusted. In Mattermost `@channel`, `@all` and `@here` notify every
 * member of the channel. The words Mattermost checks for them are split as its mention parser splits
 * them (server/channels/app/mention_parser_standard.go): runs of letters, digits and `: . - _ @`, then
 * again at `.`, `-`, `:`.
 */
function mattermostWords(text: string): string[] {
  const words = text.split(/[^\p{L}\p{N}:.\-_@]+/u).filter((w) => w !== "");
  return words.flatMap((word) => [word, ...word.split(/[.\-:]+/).filter((w) => w !== "")]);
}
/** The `message` of the last post request. */
const lastMessage = () => (api.requests.at(-1)?.json as { message?: string } | undefined)?.message ?? "";
const CHANNEL_WIDE = new Set(["@channel", "@all", "@here"]);

let api: FakeApi;
beforeAll(async () => {
  api = await startFakeApi((r) =>
    r.method === "GET" ? { json: { username: "svc" } } : { status: 201, json: { id: "p1" } },
  );
});
afterAll(() => api.close());

describe("mattermost: channel-wide mentions from payload text notify no one", () => {
  it("@channel, @all, @here (any case, before punctuation) are sent so the parser sees no such word", async () => {
    const title = "@channel deploy failed; @ALL hands. ping @here: now, x.@all-y and @channel";
    const registry = registryFor({
      mattermost: { enabled: true, token: "MM", base_url: api.url, home_channel: "town" },
    });
    await registry.get("mattermost")?.send(message(`Issue: ${title}`));
    const sent = lastMessage();
    expect(mattermostWords(`Issue: ${title}`).filter((w) => CHANNEL_WIDE.has(w.toLowerCase()))).not.toEqual(
      [],
    );
    expect(mattermostWords(sent).filter((w) => CHANNEL_WIDE.has(w.toLowerCase()))).toEqual([]);
    expect(sent.replaceAll("\u200B", "")).toBe(`Issue: ${title}`);
  });

  it("leaves other @ words and e-mail addresses as they are", async () => {
    const text = "thanks @alice, mail ops@all.example.org, see @all_hands and @channels";
    const registry = registryFor({
      mattermost: { enabled: true, token: "MM", base_url: api.url, home_channel: "town" },
    });
    await registry.get("mattermost")?.send(message(text));
    expect(lastMessage()).toBe(text);
  });
});
