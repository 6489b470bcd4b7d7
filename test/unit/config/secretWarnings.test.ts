import { describe, expect, it } from "vitest";
import { secretCharacterWarnings } from "../../../src/config/secretWarnings.js";

const FILE = "/home/u/.svc/config.yaml";

describe("a secret that token senders can never match is named at startup", () => {
  it("names the key of a route's own secret outside printable ASCII, never the secret", () => {
    const warnings = secretCharacterWarnings(
      [{ name: "gl", secret: "sekérit", route: { secret: "sekérit" } }],
      FILE,
    );
    expect(warnings).toEqual([
      `[webhook] ${FILE}: platforms.webhook.routes.gl.secret has a character outside printable ASCII, so a sender that sends the secret itself (X-Gitlab-Token, Authorization: Bearer) is always answered 401; HMAC signatures and Basic credentials still verify — use a printable ASCII secret without edge spaces (svc gateway setup generates one) if this route takes tokens`,
    ]);
    expect(warnings.join("\n")).not.toContain("sekérit");
  });

  it("names the global secret for a route that falls back to it", () => {
    const [warning] = secretCharacterWarnings([{ name: "any", secret: "tab\there", route: {} }], FILE);
    expect(warning).toContain(
      `${FILE}: platforms.webhook.secret (the global secret or WEBHOOK_SECRET, which overrides it; route any uses it) has a character`,
    );
  });

  it("names a secret with a space at either end (HTTP strips it from a token header), never the secret", () => {
    const [warning] = secretCharacterWarnings(
      [{ name: "gl", secret: "tok123 ", route: { secret: "tok123 " } }],
      FILE,
    );
    expect(warning).toContain(
      "platforms.webhook.routes.gl.secret begins or ends with a space, which HTTP strips from a header's value",
    );
    expect(warning).not.toContain("tok123");
  });

  it("is silent for printable ASCII secrets and INSECURE_NO_AUTH", () => {
    expect(
      secretCharacterWarnings(
        [
          { name: "a", secret: "plain-secret ~!", route: { secret: "plain-secret ~!" } },
          { name: "b", secret: "INSECURE_NO_AUTH", route: { secret: "INSECURE_NO_AUTH" } },
        ],
        FILE,
      ),
    ).toEqual([]);
  });
});
