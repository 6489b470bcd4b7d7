import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defuseChannelMentions } from "../../../src/io/targets/mattermost.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * Spec 5 rule 6: payload text is untrusted. In Mattermost `@channel`, `@all` and `@here` notify every
 * member of the channel. The channel-wide mentions Mattermost's parser finds in a text, as it finds them
 * (server/channels/app/mention_parser_standard.go, ProcessText): words are runs of letters, digits and
 * `: . - _ @`; a word's leading `: . - _` are trimmed; then the word, the word without trailing `. - : _`,
 * or (a word not starting with `@`) each piece of it split at `.`, `-`, `:` is checked.
 */
function channelMentions(text: string): string[] {
  const wide = (word: string) => CHANNEL_WIDE.has(word.toLowerCase());
  const found: string[] = [];
  for (const raw of text.split(/[^\p{L}\p{N}:.\-_@]+/u)) {
    if (raw === "" || (raw.startsWith(":") && raw.endsWith(":"))) continue;
    const word = raw.replace(/^[:.\-_]+/, "");
    let stripped = word;
    let hit = wide(word) ? word : undefined;
    while (hit === undefined && /[.\-:_]$/.test(stripped)) {
      stripped = stripped.slice(0, -1);
      if (wide(stripped)) hit = stripped;
    }
    if (hit === undefined && !word.startsWith("@") && /[.\-:]/.test(word))
      hit = word.split(/[.\-:]/).find(wide);
    if (hit !== undefined) found.push(hit);
  }
  return found;
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
    const title =
      "@channel deploy failed; @ALL hands. ping @here: now, x.@all-y and @channel, _@here, @all_ and __@Channel__.";
    const registry = registryFor({
      mattermost: { enabled: true, token: "MM", base_url: api.url, home_channel: "town" },
    });
    await registry.get("mattermost")?.send(message(`Issue: ${title}`));
    const sent = lastMessage();
    // Underscores around the word are trimmed by the parser: `_@here` and `@all_` notify the channel too.
    expect(channelMentions(`Issue: ${title}`)).toHaveLength(8);
    expect(channelMentions(sent)).toEqual([]);
    expect(sent.replaceAll("\u200B", "")).toBe(`Issue: ${title}`);
  });

  it("no text made of mention words and the characters the parser trims or splits at notifies the channel", () => {
    const piece = fc.constantFrom("@", "_", ".", "-", ":", " ", "a", "channel", "ALL", "here", "x");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const text = pieces.join("");
        const sent = defuseChannelMentions(text);
        expect(channelMentions(sent)).toEqual([]);
        expect(sent.replaceAll("\u200B", "")).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it("leaves other @ words and e-mail addresses as they are", async () => {
    const text = "thanks @alice, mail ops@all.example.org, see @all_hands, a_@all and @channels";
    const registry = registryFor({
      mattermost: { enabled: true, token: "MM", base_url: api.url, home_channel: "town" },
    });
    await registry.get("mattermost")?.send(message(text));
    expect(channelMentions(text)).toEqual([]);
    expect(lastMessage()).toBe(text);
  });
});

describe("mattermost: a split message's parts notify no one, each read alone", () => {
  it("a cut that takes away the letter before or after a mention defuses it in the part it leaves it in", async () => {
    const registry = registryFor({
      mattermost: { enabled: true, token: "MM", base_url: api.url, home_channel: "town" },
    });
    const posts = () =>
      api.requests.filter((r) => r.method === "POST").map((r) => (r.json as { message: string }).message);
    // No whitespace before the limit: the cut falls at 16383 characters, after `a_` and after `.@all`.
    const texts = [`${"A".repeat(16_381)}a_@all please look`, `${"A".repeat(16_378)}.@allhands`];
    for (const text of texts) {
      // Whole, neither text holds a mention: `a_@all` and `@allhands` are other words.
      expect(channelMentions(text)).toEqual([]);
      const before = posts().length;
      await registry.get("mattermost")?.send(message(text));
      const parts = posts().slice(before);
      // The first part's zero-width space makes it longer than the limit: it is split again.
      expect(parts.length).toBeGreaterThanOrEqual(2);
      expect(parts.every((part) => part.length <= 16_383)).toBe(true);
      expect(parts.flatMap(channelMentions)).toEqual([]);
      expect(parts.join("").replaceAll("\u200B", "")).toBe(text);
    }
  });
});
