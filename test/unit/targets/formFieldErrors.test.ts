import { describe, expect, it } from "vitest";
import { platformErrorText } from "../../../src/io/targets/httpJson.js";

/**
 * Discord answers a refused message with 400 `{"code": 50035, "message": "Invalid Form Body", "errors": …}`:
 * the reason is only in the `errors` tree (discord.com/developers/docs/reference#error-messages).
 */
describe("platformErrorText: Discord's Invalid Form Body", () => {
  it("names the field and Discord's reason from the errors tree", () => {
    const body = {
      code: 50035,
      message: "Invalid Form Body",
      errors: {
        content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
      },
    };
    expect(platformErrorText(body, JSON.stringify(body))).toBe(
      "Invalid Form Body — content: Must be 2000 or fewer in length.",
    );
  });

  it("gives the nested path of an array field", () => {
    const body = {
      code: 50035,
      message: "Invalid Form Body",
      errors: {
        allowed_mentions: {
          parse: { "0": { _errors: [{ code: "ENUM", message: "Value must be one of {'users'}." }] } },
        },
      },
    };
    expect(platformErrorText(body, "")).toBe(
      "Invalid Form Body — allowed_mentions.parse.0: Value must be one of {'users'}.",
    );
  });

  it("other answers keep their message", () => {
    expect(platformErrorText({ code: 50001, message: "Missing Access" }, "")).toBe("Missing Access");
    expect(platformErrorText({ errors: ["not a tree"], message: "Oops" }, "")).toBe("Oops");
  });
});
