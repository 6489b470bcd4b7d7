import { describe, expect, it } from "vitest";
import { startTestGateway, webhookConfig } from "../../helpers/gateway.js";

const OPEN = "INSECURE_NO_AUTH";

/** Spec 2.3 `regex` runs on a linear-time engine (RE2): a pattern it cannot run is a config error. */
describe("regex filters", () => {
  it("a pattern RE2 cannot run (lookahead, backreference) refuses to start, naming the key and the way out", async () => {
    await expect(
      startTestGateway({
        config: webhookConfig({
          prs: { secret: OPEN, filters: [{ field: "pull_request.title", regex: "^(?!WIP)" }] },
        }),
      }),
    ).rejects.toThrow(/routes\.prs\.filters\[0\]\.regex: not a valid RE2 pattern .*not: \{field/);
    await expect(
      startTestGateway({
        config: webhookConfig({
          dup: { secret: OPEN, filters: [{ any: [{ field: "s", regex: "(a)\\1" }] }] },
        }),
      }),
    ).rejects.toThrow(/routes\.dup\.filters\[0\]\.any\[0\]\.regex: not a valid RE2 pattern/);
  });
});
