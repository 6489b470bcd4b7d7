import { vi } from "vitest";
import type { FakeApi } from "../fakes/httpFake.js";
import { sentTexts } from "../fakes/telegram.js";

/** Waits (polling, up to 10 s) until the fake Telegram received `count` messages in all, and returns their texts. */
export function telegramMessages(telegram: FakeApi, count: number): Promise<string[]> {
  return vi.waitFor(
    () => {
      const texts = sentTexts(telegram);
      if (texts.length < count) throw new Error(`${texts.length} of ${count} messages`);
      return texts;
    },
    { timeout: 10_000, interval: 20 },
  );
}
