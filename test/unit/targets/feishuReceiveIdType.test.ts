import { describe, expect, it } from "vitest";
import { receiveIdType } from "../../../src/io/targets/feishu.js";

describe("feishu: the id type follows the chat id", () => {
  it("oc_ chat ids, ou_ open ids, on_ union ids, addresses; an oc_ id with an @ (payload text) stays a chat id", () => {
    expect(receiveIdType("oc_abc")).toBe("chat_id");
    expect(receiveIdType("ou_abc")).toBe("open_id");
    expect(receiveIdType("on_abc")).toBe("union_id");
    expect(receiveIdType("dev@example.org")).toBe("email");
    expect(receiveIdType("oc_x@evil.org")).toBe("chat_id");
  });
});
