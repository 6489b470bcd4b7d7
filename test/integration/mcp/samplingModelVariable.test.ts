import { describe, expect, it } from "vitest";
import { stdioEntry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/** Spec 2.3: string values anywhere in an entry may use ${VAR}; `sampling.model` is one. */
describe("sampling.model with a variable", () => {
  it("reaches the runner rendered from the profile's .env", async () => {
    ctx.home.write(".env", "SAMPLING_MODEL=m-from-env\n");
    const seen: Array<{ model?: string }> = [];
    const runner = async (r: { prompt: string; model?: string }) => {
      seen.push(r);
      return `reply to ${r.prompt}`;
    };
    const h = ctx.hub(
      ctx.home,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config file's own interpolation syntax
      { on: stdioEntry("legacy", { sampling: { enabled: true, model: "${SAMPLING_MODEL}" } }) },
      { runner },
    );
    expect(text(await h.call("on", "sample", { prompt: "hi" }))).toBe("m-from-env:reply to user: hi");
    expect(seen).toEqual([expect.objectContaining({ model: "m-from-env" })]);
  });
});
