import { afterEach, describe, expect, it } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { makeJob } from "../../../src/actors/oauth/context.js";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { svcPaths } from "../../../src/config/paths.js";
import { silentLogger } from "../../../src/io/log.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { harness, loginWith, oauthFakesPerTest } from "./helpers.js";

let home: TempHome;
const { as, resource } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

const refreshes = (seen: { body: URLSearchParams }[]) =>
  seen.filter((r) => r.body.get("grant_type") === "refresh_token").length;

describe("a token endpoint that answers form-encoded (GitHub's answer to a client that does not ask for JSON)", () => {
  it("a browser login and a refresh read the form-encoded token responses", async () => {
    home = tempHome();
    const auth = await as({ formEncodedTokenAnswers: true });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "formed", rs.url, { cimd: false });
    const first = await loginWith(h);
    expect(first).toMatchObject({ access_token: auth.issued[0], token_type: "Bearer" });
    expect(typeof first.expires_at).toBe("number");
    const later = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "formed",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later },
    );
    const renewed = await usableTokens(job);
    expect(renewed.access_token).toBe(auth.issued[1]);
    expect(renewed.refresh_token).not.toBe(first.refresh_token);
  });

  it("a refresh token refused with a form-encoded invalid_grant is not sent again", async () => {
    home = tempHome();
    const auth = await as({ formEncodedTokenAnswers: true });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "reused", rs.url, { cimd: false });
    const first = await loginWith(h);
    const later = Date.now() + 2 * 3600_000;
    const job = makeJob(
      "reused",
      { url: rs.url, auth: "oauth", oauth: { cimd: false } },
      { paths: svcPaths(home.dir), logger: silentLogger(), now: () => later },
    );
    await usableTokens(job);
    // The rotated-away refresh token is back on disk (a backup restored): the server refuses it.
    job.store.saveTokens(first);
    await expect(usableTokens(job)).rejects.toThrow(
      /^reused: token refresh failed — http:\/\/127\.0\.0\.1:\d+\/token answered 400: .*invalid_grant.* — run `svc mcp login reused`$/,
    );
    expect(refreshes(auth.seen)).toBe(2);
    await expect(usableTokens(job)).rejects.toThrow(/run `svc mcp login reused`/);
    expect(refreshes(auth.seen)).toBe(2);
  });

  it("a device login keeps polling on a form-encoded authorization_pending and slow_down", async () => {
    home = tempHome();
    const auth = await as({
      formEncodedTokenAnswers: true,
      device: true,
      deviceInterval: 1,
      devicePolls: ["authorization_pending", "slow_down"],
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "formdev", rs.url);
    const clock = new SimulatedClock();
    const actor = createActor(deviceLoginLogic, {
      input: { serverName: "formdev", job: h.job, timeoutMs: 300_000 },
      clock,
    }).start();
    const waits: number[] = [];
    while (actor.getSnapshot().status === "active") {
      const snap = await waitFor(
        actor,
        (s) => s.status !== "active" || s.matches({ authorizing: "waiting" }),
      );
      if (snap.status !== "active") break;
      waits.push(snap.context.intervalMs);
      clock.increment(snap.context.intervalMs);
    }
    expect(actor.getSnapshot().output?.ok).toBe(true);
    expect(waits).toEqual([1000, 1000, 6000]);
    expect(h.job.store.readTokens()).toMatchObject({ access_token: auth.issued[0], flow: "device" });
  });
});
