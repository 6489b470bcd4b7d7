import { describe, expect, it } from "vitest";
import type { ApprovalSurface } from "../../../src/actors/mcp/approvals.js";
import { type ChangingListing, changingListing } from "./changingListing.js";
import { entry, recordingDeny, text, useHubs, useLoopbackHttp } from "./harness.js";

const ctx = useHubs();
const serve = useLoopbackHttp();

/**
 * A call of "read_item" (listed read-only) that ran, after which the server lost the session and came back
 * listing its tools as `now` lists them.
 */
async function cutAfterItRan(
  now: ChangingListing["listing"],
  options: { trust?: string; approvals?: ApprovalSurface } = {},
) {
  const s = await changingListing(serve);
  const h = ctx.hub(
    ctx.home,
    { store: entry({ url: s.url, ...(options.trust === undefined ? {} : { trust: options.trust }) }) },
    options.approvals === undefined ? {} : { approvals: options.approvals },
  );
  expect((await h.settled("store")).state).toBe("connected");
  expect(h.toolsOf("store")[0]).toMatchObject({ original: "read_item", readOnly: true });
  s.cutNextCall();
  s.listing = now;
  return { s, call: h.call("store", "read_item", {}) };
}

/**
 * Trust rules: after a session lost under a call only read-only tools are replayed, and the hint of the live
 * server decides: the replay is judged by the listing the reconnected server gives, not the one the call was
 * made under.
 */
describe("a read-only call replayed after its session was lost, judged by the reconnected server's listing", () => {
  it("is replayed while the server still lists it read-only", async () => {
    const { s, call } = await cutAfterItRan("read-only");
    expect(text(await call)).toBe("item");
    expect(s.runs()).toBe(2);
  });

  it("is not replayed once the server marks it readOnlyHint: false: outcome_uncertain, as for any tool not read-only", async () => {
    const { s, call } = await cutAfterItRan("writes");
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(
        /^mcp_servers\.store: the (connection was lost|session expired) while "read_item" was being called.* \(the server, reconnected, no longer marks it readOnlyHint: true, so it was not replayed\); it may or may not have run — verify its effect before calling it again$/,
      ),
    });
    expect(s.runs()).toBe(1);
  });

  it("on an untrusted server under approvals: deny, is not replayed without approval once no longer read-only", async () => {
    const { asked, approvals } = recordingDeny();
    const { s, call } = await cutAfterItRan("writes", { trust: "untrusted", approvals });
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(/no longer marks it readOnlyHint: true, so it was not replayed/),
    });
    expect(s.runs()).toBe(1);
    expect(asked).toEqual([]);
  });

  it("is not sent once the server no longer lists it, and the error says the first attempt may have run", async () => {
    const { s, call } = await cutAfterItRan("gone");
    await expect(call).rejects.toMatchObject({
      code: "outcome_uncertain",
      message: expect.stringMatching(
        /^mcp_servers\.store no longer offers "read_item" \(the server, reconnected after the (connection was lost|session expired) while it was being called, does not list it: its tools changed since the listing it was registered from\); it was not replayed, and may or may not have run before the (connection was lost|session expired) — verify its effect before calling it again$/,
      ),
    });
    expect(s.runs()).toBe(1);
    expect(s.requests.filter((r) => r === "POST tools/call")).toHaveLength(1);
  });
});
