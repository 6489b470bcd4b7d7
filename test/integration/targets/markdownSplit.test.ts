import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sentContents, startFakeDiscord } from "../../fakes/discord.js";
import type { FakeApi } from "../../fakes/httpFake.js";
import { sentTexts, startFakeTelegram } from "../../fakes/telegram.js";
import { message, registryFor } from "./support.js";

/**
 * Long replies are split to the platform's limit. Discord renders Markdown: a part cut inside a fenced
 * code block must close it and the next part reopen it (same language), or half the code shows as text
 * and the rest of the reply as code. And no part may be blank: Telegram and Discord refuse an empty
 * message, which would fail a delivery whose text already went out.
 */
let discord: FakeApi;
let telegram: FakeApi;
beforeAll(async () => {
  discord = await startFakeDiscord("D-TOKEN");
  telegram = await startFakeTelegram();
});
afterAll(async () => {
  await discord.close();
  await telegram.close();
});

/** Fence lines (```` ``` ````) in a part: an even count means every code block it opens is closed. */
const fenceLines = (part: string) => part.split("\n").filter((line) => /^ {0,3}```/.test(line)).length;

describe("discord: a long reply with a code block", () => {
  const code = Array.from({ length: 120 }, (_, i) => `  const value${i} = compute(${i}); // step ${i}`).join(
    "\n",
  );
  const text = `Here is the fix:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nRun the tests again afterwards.`;

  it("every part is within 2000 characters and closes the code block it opens; the next reopens it as ts", async () => {
    expect(text.length).toBeGreaterThan(4000);
    const registry = registryFor({ discord: { enabled: true, token: "D-TOKEN", base_url: discord.url } });
    const receipt = await registry.get("discord")?.send(message(text, { chat_id: "555" }));
    const parts = sentContents(discord);
    expect(receipt?.parts).toBe(parts.length);
    expect(parts.length).toBeGreaterThanOrEqual(3);
    for (const part of parts) {
      expect([...part].length).toBeLessThanOrEqual(2000);
      expect(fenceLines(part) % 2).toBe(0);
    }
    for (const part of parts.slice(1, -1)) expect(part.startsWith("```ts\n")).toBe(true);
    // Without the fences added at the cuts, the parts are the text.
    const rebuilt = parts
      .map((part, i) => {
        let body = part;
        if (i > 0) body = body.replace(/^```ts\n/, "");
        if (i < parts.length - 1) body = body.replace(/\n?```$/, "");
        return body;
      })
      .join("");
    expect(rebuilt.replaceAll("\n", "")).toBe(text.replaceAll("\n", ""));
  });
});

describe("no blank parts", () => {
  it("telegram: a 4096-character line followed by blank lines is one message, and the delivery succeeds", async () => {
    const registry = registryFor({ telegram: { enabled: true, token: "1:T", base_url: telegram.url } });
    const text = `${"a".repeat(4096)}\n\n`;
    await expect(registry.get("telegram")?.send(message(text, { chat_id: "-100" }))).resolves.toMatchObject({
      parts: 1,
    });
    expect(sentTexts(telegram)).toEqual(["a".repeat(4096)]);
  });

  it("an empty reply is still sent once (spec 4.4), and the platform's refusal fails the delivery", async () => {
    const registry = registryFor({ telegram: { enabled: true, token: "1:T", base_url: telegram.url } });
    const before = sentTexts(telegram).length;
    await expect(registry.get("telegram")?.send(message("", { chat_id: "-100" }))).rejects.toThrow(
      /message text is empty/,
    );
    expect(sentTexts(telegram).slice(before)).toEqual([""]);
  });
});
