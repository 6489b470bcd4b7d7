import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defuseMaskedLinks } from "../../../src/io/targets/maskedLinks.js";
import { sentContents, startFakeDiscord } from "../../fakes/discord.js";
import { type FakeApi, startFakeApi } from "../../fakes/httpFake.js";
import { message, registryFor } from "./support.js";

/**
 * Payload text is untrusted. Discord and Mattermost render `[text](url)` as a link showing its text only,
 * so `[Approve in GitHub](https://evil.example/phish)` from a payload was a link whose target the reader
 * did not see (and Mattermost's `[text][ref]` with a `[ref]: url` line). The text is sent so that both show
 * it as written: a backslash escapes the `(` after the `]` (and the `[` of a `[ref]: url` line); the URL
 * in it stays a plain link that shows where it goes. Code is left as it is.
 */
const TOKEN = "DISCORD-TOKEN";
let discord: FakeApi;
let mattermost: FakeApi;
beforeAll(async () => {
  discord = await startFakeDiscord(TOKEN);
  mattermost = await startFakeApi((r) =>
    r.method === "GET" ? { json: { username: "svc" } } : { status: 201, json: { id: "p1" } },
  );
});
afterAll(async () => {
  await discord.close();
  await mattermost.close();
});

let sends = 0;
/** The text Discord and Mattermost got for `text`. */
async function sent(text: string): Promise<{ discord: string; mattermost: string }> {
  const registry = registryFor({
    discord: { enabled: true, token: TOKEN, base_url: discord.url, home_channel: "555" },
    mattermost: { enabled: true, token: "MM", base_url: mattermost.url, home_channel: "town" },
  });
  sends += 1;
  const msg = message(text, {}, { deliveryId: `masked-${sends}` });
  await registry.get("discord")?.send(msg);
  await registry.get("mattermost")?.send(msg);
  const post = mattermost.requests.at(-1)?.json as { message?: string } | undefined;
  return { discord: sentContents(discord).at(-1) ?? "", mattermost: post?.message ?? "" };
}

describe("discord and mattermost: a masked link from payload text shows as written", () => {
  it("[text](url) gets a backslash before its ( and reads as the text it was; a plain URL is left as it is", async () => {
    const text =
      "Review: [Approve in GitHub](https://evil.example/phish) or ![x](https://evil.example/p.png) — details at https://github.com/o/r/pull/1";
    const expected =
      "Review: [Approve in GitHub]\\(https://evil.example/phish) or ![x]\\(https://evil.example/p.png) — details at https://github.com/o/r/pull/1";
    expect(await sent(text)).toEqual({ discord: expected, mattermost: expected });
  });

  it("a [ref]: url line (a Mattermost reference link's target) gets a backslash before its [", async () => {
    const text = "[Approve][1] now\n\n[1]: https://evil.example/phish\n  [ok]: https://evil.example/2";
    const expected =
      "[Approve][1] now\n\n\\[1]: https://evil.example/phish\n  \\[ok]: https://evil.example/2";
    expect(await sent(text)).toEqual({ discord: expected, mattermost: expected });
  });

  it("code spans and fenced blocks are left as they are; an escaped ] or ( stays as written", async () => {
    const text =
      "run `handlers[type](event)` then\n```js\nconst f = fns[name](arg);\n```\nnot a link: [a\\](b) and [c]\\(d)";
    expect(await sent(text)).toEqual({ discord: text, mattermost: text });
  });

  it("backticks a link could take into its text, or a URL could, are no code: the ( after the ] gets its backslash", async () => {
    expect(defuseMaskedLinks("[Approve `x](https://evil.example)`")).toBe(
      "[Approve `x]\\(https://evil.example)`",
    );
    expect(defuseMaskedLinks("see https://a.example/`x [Approve](https://evil.example)`")).toBe(
      "see https://a.example/`x [Approve]\\(https://evil.example)`",
    );
    // Closing backticks more than the opening ones end no span on either platform.
    expect(defuseMaskedLinks("`[Approve](https://evil.example)``")).toBe(
      "`[Approve]\\(https://evil.example)``",
    );
    expect(defuseMaskedLinks("```x````[Approve](https://evil.example)```")).toBe(
      "```x````[Approve]\\(https://evil.example)```",
    );
    // An escaped backtick opens nothing.
    expect(defuseMaskedLinks("\\`[Approve](https://evil.example)`")).toBe(
      "\\`[Approve]\\(https://evil.example)`",
    );
  });

  it("outside code, no ]( and no [ref]: line is left, and the text shows as the one given", () => {
    /** The text as shown: a backslash before a punctuation character shows that character. */
    const shown = (text: string) => text.replace(/\\([!-/:-@[-`{-~])/g, "$1");
    const piece = fc.constantFrom("[", "]", "(", ")", "\\", "a", " ", "\n", ":", "https://e.x", "  ");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), (pieces) => {
        const text = pieces.join("");
        const out = defuseMaskedLinks(text);
        // Escaped pairs, taken left to right as the platforms do, are no syntax.
        const syntax = out.replace(/\\[!-/:-@[-`{-~]/g, "  ");
        expect(syntax).not.toContain("](");
        expect(syntax).not.toMatch(/^ {0,3}\[[^\]\n]+\]:/m);
        expect(shown(out)).toBe(shown(text));
      }),
      { numRuns: 1000 },
    );
  });
});
