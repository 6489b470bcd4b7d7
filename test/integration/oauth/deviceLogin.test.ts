import { afterEach, describe, expect, it } from "vitest";
import { createActor, SimulatedClock, waitFor } from "xstate";
import { deviceLoginLogic } from "../../../src/actors/oauth/deviceLogin.js";
import { usableTokens } from "../../../src/actors/oauth/refresh.js";
import { runLogin } from "../../../src/actors/oauth/runLogin.js";
import { DEVICE_GRANT } from "../../../src/io/oauth/discovery.js";
import { USER_AGENT } from "../../../src/io/version.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { pinnedPortsForFile } from "../../helpers/pinnedPortsLock.js";
import { harness, loginWith, oauthFakesPerTest, testSystem } from "./helpers.js";

// A first login to a server takes a pinned callback port (test/helpers/pinnedPortsLock.ts).
pinnedPortsForFile();

let home: TempHome;
const { as, resource } = oauthFakesPerTest();
afterEach(() => home?.cleanup());

/** Runs the device-login actor on a simulated clock, advancing it whenever the actor waits to poll. */
async function drive(h: ReturnType<typeof harness>, timeoutMs = 300_000) {
  const clock = new SimulatedClock();
  const actor = createActor(deviceLoginLogic, {
    input: { serverName: h.job.serverName, job: h.job, timeoutMs },
    clock,
  }).start();
  const waits: number[] = [];
  while (actor.getSnapshot().status === "active") {
    const snap = await waitFor(actor, (s) => s.status !== "active" || s.matches({ authorizing: "waiting" }));
    if (snap.status !== "active") break;
    waits.push(snap.context.intervalMs);
    clock.increment(snap.context.intervalMs);
  }
  return { output: actor.getSnapshot().output, waits };
}

describe("device authorization (RFC 8628) against a loopback authorization server", () => {
  it("prints the URL and code, honours authorization_pending and slow_down (+5 s), and saves tokens", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["authorization_pending", "slow_down", "authorization_pending"],
      deviceInterval: 2,
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "dev", rs.url, { user_agent: "Poller/1", scope: "mcp offline" });
    const { output, waits } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(waits).toEqual([2000, 2000, 7000, 7000]);
    expect(h.printed.join("\n")).toContain(`open ${auth.url}/activate and enter the code: WDJB-MJHT`);
    expect(h.printed.join("\n")).toContain(`${auth.url}/activate?user_code=WDJB-MJHT`);
    expect(h.opened).toHaveLength(0);
    expect(h.job.store.readTokens()).toMatchObject({ access_token: auth.issued[0], flow: "device" });

    const registration = auth.seen.find((r) => r.path === "/register");
    expect(JSON.parse(registration?.raw ?? "{}").grant_types).toEqual([DEVICE_GRANT, "refresh_token"]);
    const deviceRequest = auth.seen.find((r) => r.path === "/device");
    expect(deviceRequest?.body.get("scope")).toBe("mcp offline");
    expect(deviceRequest?.body.get("resource")).toBe(rs.url);
    expect(deviceRequest?.headers["user-agent"]).toBe(USER_AGENT);
    const polls = auth.seen.filter((r) => r.path === "/token");
    expect(polls).toHaveLength(4);
    for (const p of polls) expect(p.headers["user-agent"]).toBe("Poller/1");
  });

  it("logs in at a server whose metadata lists no grant_types_supported but has a device endpoint (Microsoft Entra ID, Auth0)", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      deviceInterval: 1,
      metadata: () => ({ grant_types_supported: undefined }),
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "entra", rs.url);
    const { output } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(h.job.store.readTokens()).toMatchObject({ access_token: auth.issued[0], flow: "device" });
  });

  it("GitHub-style polls (errors answered 200) keep polling on authorization_pending and slow_down", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["authorization_pending", "slow_down", "authorization_pending"],
      deviceInterval: 5,
      deviceErrorStatus: 200,
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "gh", rs.url);
    const { output, waits } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(waits).toEqual([5000, 5000, 10000, 10000]);
    expect(h.job.store.readTokens()?.access_token).toBe(auth.issued[0]);
  });

  it("GitHub-style access_denied answered 200 stops the login with the denial, not a parse error", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["access_denied"],
      deviceInterval: 1,
      deviceErrorStatus: 200,
    });
    const rs = await resource([auth.url]);
    const { output } = await drive(harness(home.dir, "ghdenied", rs.url));
    expect(output && !output.ok && output.error.message).toMatch(/device login was denied/);
  });

  it("slow_down that states a longer interval (GitHub) is honoured", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["slow_down", "authorization_pending"],
      deviceInterval: 5,
      slowDownInterval: 30,
    });
    const rs = await resource([auth.url]);
    const { output, waits } = await drive(harness(home.dir, "slow30", rs.url));
    expect(output?.ok).toBe(true);
    expect(waits).toEqual([5000, 30000, 30000]);
  });

  it("a poll that gets no answer (connection dropped) is retried with a doubled interval, not the end of the login", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["authorization_pending"],
      deviceInterval: 1,
      dropPolls: 2,
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "flaky", rs.url);
    const { output, waits } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(waits).toEqual([1000, 2000, 4000, 4000]);
    expect(h.job.store.readTokens()?.access_token).toBe(auth.issued[0]);
  });

  it("gives up after four polls in a row without an answer, naming the failure", async () => {
    home = tempHome();
    const auth = await as({ device: true, deviceInterval: 1, dropPolls: 10 });
    const rs = await resource([auth.url]);
    const log = captureLogger();
    const { output, waits } = await drive(harness(home.dir, "down", rs.url, {}, { logger: log.logger }));
    expect(output && !output.ok && output.error.message).toMatch(
      /^down: device token request failed — http:\/\/127\.0\.0\.1:\d+\/token unreachable \(fetch failed: other side closed\) — run `svc mcp login down --flow device` to try again$/,
    );
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
    // Three retries are announced; the fourth failure ends the login and is not called a retry.
    const retries = log.lines().filter((line) => line.includes("device poll failed"));
    expect(retries.map((line) => JSON.parse(line).msg)).toEqual([
      "[oauth] device poll failed; retrying in 2 s",
      "[oauth] device poll failed; retrying in 4 s",
      "[oauth] device poll failed; retrying in 8 s",
    ]);
    expect(JSON.parse(retries[0] as string).err).not.toContain("svc mcp login");
  });

  const FIREWALL_PAGE = "<html><body>Request blocked by firewall</body></html>";

  it.each([
    ["a firewall's 403 page", 403, FIREWALL_PAGE],
    ["a proxy's 404", 404, "Not Found"],
    ["a 400 with an empty body", 400, ""],
  ])(
    "%s while polling is no OAuth answer: polling goes on at the interval, said once, and the login succeeds once the server answers",
    async (_, status, body) => {
      home = tempHome();
      const auth = await as({
        device: true,
        deviceInterval: 1,
        devicePolls: ["authorization_pending"],
        blockedPolls: { count: 5, status, body },
      });
      const rs = await resource([auth.url]);
      const log = captureLogger();
      const h = harness(home.dir, "walled", rs.url, {}, { logger: log.logger });
      const { output, waits } = await drive(h);
      expect(output?.ok).toBe(true);
      // Five blocked polls, one pending, then the tokens: no backoff, no bound of retries.
      expect(waits).toEqual([1000, 1000, 1000, 1000, 1000, 1000, 1000]);
      expect(h.job.store.readTokens()?.access_token).toBe(auth.issued[0]);
      const warned = log
        .lines()
        .map((line) => JSON.parse(line) as { level: number; msg: string; err?: string });
      expect(warned.filter((l) => l.level >= 40)).toEqual([
        expect.objectContaining({
          msg: `[oauth] the token endpoint answered a device poll ${status} without an OAuth error; polling on every 1 s until the code expires`,
          err: `${auth.url}/token answered ${status}${body === "" ? "" : `: ${body}`}`,
        }),
      ]);
    },
  );

  it("a firewall's 403 page on every poll ends the login only when the code expires, naming the last answer", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      deviceInterval: 1,
      deviceResponse: (fields) => ({ ...fields, expires_in: 6 }),
      blockedPolls: { count: 100, status: 403, body: FIREWALL_PAGE },
    });
    const rs = await resource([auth.url]);
    const log = captureLogger();
    const { output, waits } = await drive(harness(home.dir, "walled", rs.url, {}, { logger: log.logger }));
    expect(output && !output.ok && output.error.message).toBe(
      `walled: the device code expired before it was approved — the last poll got no OAuth answer (${auth.url}/token answered 403: ${FIREWALL_PAGE}) — run \`svc mcp login walled --flow device\` again`,
    );
    expect(waits.every((w) => w === 1000)).toBe(true);
    expect(auth.seen.filter((r) => r.path === "/token").length).toBeGreaterThanOrEqual(5);
    expect(log.lines().filter((line) => JSON.parse(line).level >= 40)).toHaveLength(1);
  });

  it("a poll refused with another OAuth error (invalid_client) ends the login with the answer and what to do", async () => {
    home = tempHome();
    const auth = await as({ device: true, deviceInterval: 1, devicePolls: ["invalid_client"] });
    const rs = await resource([auth.url]);
    const { output } = await drive(harness(home.dir, "refused", rs.url));
    expect(output && !output.ok && output.error.message).toMatch(
      /^refused: device token request failed — http:\/\/127\.0\.0\.1:\d+\/token answered 400: .*invalid_client.* — run `svc mcp login refused --flow device` to try again$/,
    );
  });

  it("accepts verification_url for verification_uri (Google's device endpoint)", async () => {
    home = tempHome();
    const auth = await as({ device: true, deviceInterval: 1, verificationUrlField: true });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "google", rs.url);
    const { output } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(h.printed.join("\n")).toContain(`open ${auth.url}/activate and enter the code: WDJB-MJHT`);
  });

  it("reads expires_in and interval written as strings (Microsoft Entra ID's v1 devicecode endpoint) and polls at that interval", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["authorization_pending"],
      deviceResponse: (fields) => ({ ...fields, expires_in: "900", interval: "3" }),
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "entrav1", rs.url);
    const { output, waits } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(waits).toEqual([3000, 3000]);
    expect(h.job.store.readTokens()).toMatchObject({ access_token: auth.issued[0], flow: "device" });
  });

  it("a token response whose expires_in is null is saved as a token without a stated lifetime", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      deviceInterval: 1,
      tokenResponse: (t) => ({ ...t, expires_in: null }),
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "nolife", rs.url);
    const { output } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(h.job.store.readTokens()?.access_token).toBe(auth.issued[0]);
    expect(h.job.store.readTokens()?.expires_at).toBeUndefined();
  });

  it("a device authorization refusal answered 200 (GitHub: device_flow_disabled) is reported with its error", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      deviceAuthorizationError: {
        status: 200,
        body: JSON.stringify({
          error: "device_flow_disabled",
          error_description: "Device Flow must be enabled",
        }),
      },
    });
    const rs = await resource([auth.url]);
    const { output } = await drive(harness(home.dir, "disabled", rs.url));
    expect(output && !output.ok && output.error.message).toMatch(
      /^disabled: device authorization request failed — http:\/\/127\.0\.0\.1:\d+\/device answered 200: .*device_flow_disabled.* — run `svc mcp login disabled --flow device` to try again, or log in with `svc mcp login disabled --flow browser`$/,
    );
  });

  it("a 200 from the device authorization endpoint that is no device authorization response (a proxy's page, a code without user_code) names the endpoint, status and excerpt", async () => {
    home = tempHome();
    for (const [name, body] of [
      ["proxied", "<html>Corporate proxy sign-in page</html>"],
      [
        "nousercode",
        JSON.stringify({ device_code: "dc", verification_uri: "https://as.test/a", expires_in: 600 }),
      ],
    ] as const) {
      const auth = await as({ device: true, deviceAuthorizationError: { status: 200, body } });
      const rs = await resource([auth.url]);
      const { output } = await drive(harness(home.dir, name, rs.url));
      const message = output && !output.ok ? output.error.message : "";
      expect(message).toMatch(
        new RegExp(
          `^${name}: device authorization request failed — http://127\\.0\\.0\\.1:\\d+/device answered 200: `,
        ),
      );
      expect(message).toContain(name === "proxied" ? "Corporate proxy sign-in page" : '"verification_uri"');
    }
  });

  it("a device authorization answer svc cannot use names the endpoint, an excerpt and what is missing or wrong, in svc's words", async () => {
    home = tempHome();
    for (const [name, reshape, problem] of [
      ["nouri", { verification_uri: null, verification_uri_complete: null }, "no verification_uri"],
      ["nolife", { expires_in: null }, "no expires_in"],
      ["absentlife", { expires_in: undefined }, "no expires_in"],
      ["deadlife", { expires_in: 0 }, "expires_in is not a positive number of seconds"],
      [
        "ftp",
        { verification_uri: "ftp://files.example/activate", verification_uri_complete: null },
        'verification_uri "ftp://files.example/activate" is not an http(s) URL',
      ],
      ["badwait", { interval: "soon" }, "interval is not a number of seconds"],
      ["numbercode", { user_code: 1234 }, "user_code is not a string"],
    ] as const) {
      const auth = await as({
        device: true,
        deviceResponse: (fields) => ({ ...fields, ...reshape }),
      });
      const rs = await resource([auth.url]);
      const h = harness(home.dir, name, rs.url);
      const { output } = await drive(h);
      const message = output && !output.ok ? output.error.message : "";
      // (The excerpt is cut at 200 characters, which may leave out the field at fault: hence what is wrong.)
      expect(message).toMatch(
        new RegExp(
          `^${name}: device authorization request failed — http://127\\.0\\.0\\.1:\\d+/device answered 200: \\{.*(?:\\}|…) \\(${problem.replace(/[().]/g, "\\$&")}\\) — run \`svc mcp login ${name} --flow device\` to try again, or log in with \`svc mcp login ${name} --flow browser\`$`,
        ),
      );
      // The device code is a credential: never in the excerpt.
      expect(message).toContain('"device_code":"[redacted]"');
      expect(message).not.toContain("dev-code-1");
      expect(h.printed.join("\n")).not.toContain("enter the code");
    }
  });

  it("an interval of 0 or less is read as none (5 s), and a relative verification_uri is resolved against the endpoint", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["authorization_pending"],
      deviceResponse: (fields) => ({
        ...fields,
        interval: 0,
        verification_uri: "/activate",
        verification_uri_complete: "activate?user_code=WDJB-MJHT",
      }),
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "relative", rs.url);
    const { output, waits } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(waits).toEqual([5000, 5000]);
    expect(h.printed.join("\n")).toContain(`open ${auth.url}/activate and enter the code: WDJB-MJHT`);
    expect(h.printed.join("\n")).toContain(
      `Or open this link directly: ${auth.url}/activate?user_code=WDJB-MJHT`,
    );
    const negative = await as({
      device: true,
      deviceResponse: (fields) => ({ ...fields, interval: "-3" }),
    });
    const { output: second, waits: secondWaits } = await drive(
      harness(home.dir, "negative", (await resource([negative.url])).url),
    );
    expect(second?.ok).toBe(true);
    expect(secondWaits).toEqual([5000]);
  });

  it("works with a plain-http authorization server that is not 127.0.0.1/localhost, as the browser flow does (docker service names)", async () => {
    home = tempHome();
    const auth = await as({ device: true, deviceInterval: 1, host: "127.0.0.2" });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "plain", rs.url);
    const { output } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(h.job.store.readTokens()?.issuer).toBe(auth.url);
    const browser = harness(home.dir, "plainb", rs.url, { cimd: false });
    expect((await loginWith(browser)).issuer).toBe(auth.url);
  });

  it("stops on access_denied and keeps the saved credentials", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: ["authorization_pending", "access_denied"],
      deviceInterval: 1,
    });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "denied", rs.url);
    h.job.store.saveTokens({ access_token: "kept", token_type: "Bearer", issuer: auth.url, flow: "device" });
    const { output } = await drive(h);
    expect(output && !output.ok && output.error.message).toMatch(
      /denied — run `svc mcp login denied --flow device`/,
    );
    expect(h.job.store.readTokens()?.access_token).toBe("kept");
  });

  it("a failed device login on another authorization server leaves the saved browser grant refreshable at its own", async () => {
    home = tempHome();
    const browserAs = await as({ accessTtl: 1 });
    const deviceAs = await as({ device: true, devicePolls: ["access_denied"], deviceInterval: 1 });
    const rs = await resource([browserAs.url, deviceAs.url]);
    const saved = await loginWith(harness(home.dir, "two", rs.url));
    expect(saved.issuer).toBe(browserAs.url);
    const { output } = await drive(harness(home.dir, "two", rs.url));
    expect(output?.ok).toBe(false);
    // The access token expires within a second: the refresh goes to the server that issued it.
    const h = harness(home.dir, "two", rs.url);
    const refreshed = await usableTokens({ ...h.job, now: () => Date.now() + 5000 });
    expect(refreshed.issuer).toBe(browserAs.url);
    expect(refreshed.access_token).toBe(browserAs.issued[1]);
    expect(deviceAs.seen.some((r) => r.body.get("grant_type") === "refresh_token")).toBe(false);
  });

  it("stops on expired_token", async () => {
    home = tempHome();
    const auth = await as({ device: true, devicePolls: ["expired_token"], deviceInterval: 1 });
    const rs = await resource([auth.url]);
    const { output } = await drive(harness(home.dir, "exp", rs.url));
    expect(output && !output.ok && output.error.message).toMatch(/device code expired/);
  });

  it("gives up after oauth.timeout", async () => {
    home = tempHome();
    const auth = await as({
      device: true,
      devicePolls: Array(100).fill("authorization_pending"),
      deviceInterval: 5,
    });
    const rs = await resource([auth.url]);
    const { output, waits } = await drive(harness(home.dir, "slow", rs.url, { timeout: 20 }), 20_000);
    expect(output && !output.ok && output.error.message).toMatch(
      /no approval within 20 s \(oauth\.timeout\)/,
    );
    expect(waits.length).toBe(4);
  });

  it("scans authorization servers in order: skips an issuer mismatch and one without the device grant", async () => {
    home = tempHome();
    const mismatch = await as({ device: true, issuer: () => "https://impostor.test" });
    const browserOnly = await as({ device: false });
    const good = await as({ device: true, deviceInterval: 1 });
    const rs = await resource([mismatch.url, browserOnly.url, good.url]);
    const h = harness(home.dir, "scan", rs.url);
    const { output } = await drive(h);
    expect(output?.ok).toBe(true);
    expect(h.job.store.readTokens()?.issuer).toBe(good.url);
    expect(mismatch.seen.some((r) => r.path === "/device")).toBe(false);
  });

  it("accepts the path-scoped advertisement of the issuer's metadata URL", async () => {
    home = tempHome();
    const auth = await as({ device: true, deviceInterval: 1 });
    const rs = await resource([`${auth.url}/.well-known/oauth-authorization-server`]);
    const { output } = await drive(harness(home.dir, "scoped", rs.url));
    expect(output?.ok).toBe(true);
  });

  it("unsupported metadata gives an actionable error and never falls back to the browser flow", async () => {
    home = tempHome();
    const auth = await as({ device: false });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "nodevice", rs.url);
    const { output } = await drive(h);
    expect(output && !output.ok && output.error.message).toMatch(
      /has no device_authorization_endpoint.*--flow browser/,
    );
    expect(auth.seen.some((r) => r.path === "/authorize" || r.path === "/register")).toBe(false);
    expect(h.opened).toHaveLength(0);
    // The entry has no oauth.flow (the device flow came from --flow device): no key to remove is named.
    expect(output && !output.ok && output.error.message).not.toContain("oauth.flow");
    const configured = harness(home.dir, "nodevice2", rs.url, { flow: "device" });
    const second = await drive(configured);
    expect(second.output && !second.output.ok && second.output.error.message).toContain(
      "log in with `svc mcp login nodevice2 --flow browser` or remove oauth.flow: device",
    );
  });

  it("refuses to start without a terminal", async () => {
    home = tempHome();
    const h = harness(home.dir, "tty", "http://127.0.0.1:9/mcp");
    const system = testSystem();
    await expect(runLogin(h.job, { flow: "device", system, isTTY: false })).rejects.toThrow(
      /needs a terminal/,
    );
    system.shutdown();
  });

  it("runs under the root actor system as a deviceLogin child", async () => {
    home = tempHome();
    const auth = await as({ device: true, deviceInterval: 1 });
    const rs = await resource([auth.url]);
    const h = harness(home.dir, "sys", rs.url);
    const system = testSystem();
    const spawned: string[] = [];
    system.root.subscribe((s: { context: { children: Record<string, unknown> } }) =>
      spawned.push(...Object.keys(s.context.children)),
    );
    const tokens = await runLogin(h.job, { flow: "device", system, isTTY: true });
    system.shutdown();
    expect(tokens.access_token).toBe(auth.issued[0]);
    expect(spawned.some((id) => id.startsWith("deviceLogin:sys:"))).toBe(true);
  });
});
