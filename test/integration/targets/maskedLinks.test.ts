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

/** The text as shown: a backslash before a punctuation character shows that character. */
const shown = (text: string) => text.replace(/\\([!-/:-@[-`{-~])/g, "$1");
/**
 * Escaped pairs, taken left to right as the platforms do, are no syntax: each is two letters (not spaces,
 * which would let a `[` after an escaped character pass for one that starts its line).
 */
const unescaped = (text: string) => text.replace(/\\[!-/:-@[-`{-~]/g, "xx");
const piece = fc.constantFrom("[", "]", "(", ")", "\\", "a", " ", "\n", ":", "https://e.x", "  ");
const platform = fc.constantFrom("discord" as const, "mattermost" as const);

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
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 16 }), platform, (pieces, on) => {
        const text = pieces.join("");
        const out = defuseMaskedLinks(text, on);
        const syntax = unescaped(out);
        expect(syntax).not.toContain("](");
        // A reference definition's label holds no unescaped bracket (CommonMark): `\[[[]:` is none.
        expect(syntax).not.toMatch(/^ {0,3}\[[^[\]\n]+\]:/m);
        expect(shown(out)).toBe(shown(text));
      }),
      { numRuns: 1000 },
    );
  });

  it("mattermost: a fenced block (``` or ~~~) is left as it is whatever came before it; a closed [ lets code after it be", async () => {
    // Alertmanager's title, then a block: the [ closed at its ], and a link's text never holds a block.
    const firing = "[FIRING:1] HighCPU on web-1\n```\nhandlers[name](event)\n```";
    expect((await sent(firing)).mattermost).toBe(firing);
    const span = "[ERROR] `fns[0](x)` failed";
    expect((await sent(span)).mattermost).toBe(span);
    // A backtick inside a block is the block's text, not a span's end.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a JavaScript template literal in a code block
    const template = "```js\nconst s = `${a}`; fns[0](s)\n```";
    expect(await sent(template)).toEqual({ discord: template, mattermost: template });
    const tildes = "[open\n~~~ts\nfns[0](s)\n~~~~\nafter";
    expect((await sent(tildes)).mattermost).toBe(tildes);
    // Discord has no ~~~ blocks and may run a link's text over a ] and lines: the ( gets its backslash.
    expect((await sent(tildes)).discord).toBe("[open\n~~~ts\nfns[0]\\(s)\n~~~~\nafter");
    // A [ still open keeps a span after it from being code; a blank line closes it.
    expect(defuseMaskedLinks("[Approve `x](https://evil.example)`", "mattermost")).toBe(
      "[Approve `x]\\(https://evil.example)`",
    );
    expect(defuseMaskedLinks("[a\n\n`fns[0](x)`", "mattermost")).toBe("[a\n\n`fns[0](x)`");
    // A span is no code across a blank line or a fence line: Mattermost ends the paragraph there.
    expect(defuseMaskedLinks("`a\n\n[x](https://evil.example)`", "mattermost")).toBe(
      "`a\n\n[x]\\(https://evil.example)`",
    );
    expect(defuseMaskedLinks("x ``` [a](https://evil.example)\n```\nb\n```", "mattermost")).toBe(
      "x ``` [a]\\(https://evil.example)\n```\nb\n```",
    );
  });

  it("a code span longer than the limit, cut in two: the masked link in the part after the cut gets its backslash", async () => {
    // The whole text's span is code, left as it is; the part after the cut holds its end alone, no code.
    const link = "[Approve in GitHub](https://evil.example/phish)";
    const defused = "[Approve in GitHub]\\(https://evil.example/phish)";
    const discordText = `\`${"code ".repeat(450)}${link}\``;
    const mattermostText = `\`${"code ".repeat(3300)}${link}\``;
    const posts = () =>
      mattermost.requests
        .filter((r) => r.method === "POST")
        .map((r) => (r.json as { message: string }).message);
    const [toDiscord, toMattermost] = [sentContents(discord).length, posts().length];
    await sent(discordText);
    const discordParts = sentContents(discord).slice(toDiscord);
    expect(discordParts).toHaveLength(2);
    expect(discordParts[1]).toContain(defused);
    expect(discordParts.join("").replace(defused, link)).toBe(discordText);
    await sent(mattermostText);
    const mattermostParts = posts().slice(toMattermost + 1);
    expect(mattermostParts.map((post) => post.length <= 16_383)).toEqual([true, true]);
    expect(mattermostParts[1]).toContain(defused);
    expect(mattermostParts.join("").replace(defused, link)).toBe(mattermostText);
  });

  it("a part its backslashes make longer than the limit is split again, and each part read alone shows as written", async () => {
    // 2,000 characters of an open span are no code once cut: 400 `](` get a backslash each.
    const text = `\`${"a](b ".repeat(600)}\``;
    const before = sentContents(discord).length;
    await sent(text);
    const parts = sentContents(discord).slice(before);
    // The fake refuses a message past 2,000 characters, as Discord does: each part was taken.
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.every((part) => part.length <= 2000 && defuseMaskedLinks(part) === part)).toBe(true);
    expect(shown(parts.join(""))).toBe(text);
  });

  it("a split message that goes on from a later part (handed on, or resumed after a restart) sends that part defused", async () => {
    const registry = registryFor({
      discord: { enabled: true, token: TOKEN, base_url: discord.url, home_channel: "555" },
    });
    const text = `\`${"code ".repeat(450)}[Approve](https://evil.example/phish)\``;
    await registry.get("discord")?.send(message(text, {}, { deliveryId: "masked-resumed" }), undefined, {
      fromPart: 1,
    });
    expect(sentContents(discord).at(-1)).toMatch(/code \[Approve\]\\\(https:\/\/evil\.example\/phish\)`$/);
  });

  it("a long text is read in proportion to its length: 1.2 MB of lines with links and spans at once", () => {
    // Each [ looked back over all the text so far for its line's start: this text took close to a minute.
    const text = "[a](https://evil.example) `c` x\n[ref]: https://evil.example\n".repeat(20_000);
    const expected = "[a]\\(https://evil.example) `c` x\n\\[ref]: https://evil.example\n".repeat(20_000);
    for (const on of ["discord", "mattermost"] as const) {
      // Compared so, a failure does not print the text.
      expect(defuseMaskedLinks(text, on) === expected).toBe(true);
    }
  }, 5_000);

  it("a closed fenced block after any text comes out as it was, and the text before it as alone", () => {
    const block = fc.constantFrom("```\nfns[0](x)\n```", "````js\na[0](`b`)\n```\n````", "~~~\n[x](y)\n~~~");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), block, (pieces, fenced) => {
        const before = pieces.join("");
        const out = defuseMaskedLinks(`${before}\n${fenced}`, "mattermost");
        expect(out).toBe(`${defuseMaskedLinks(before, "mattermost")}\n${fenced}`);
      }),
      { numRuns: 500 },
    );
  });
});
