import { afterEach, describe, expect, it } from "vitest";
import { parseHostOption } from "../../../src/cli/options.js";
import { loadConfig } from "../../../src/config/load.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { postJson } from "../../helpers/http.js";

const OPEN_ROUTE = { open: { secret: "INSECURE_NO_AUTH" } };

let gw: TestGateway | undefined;
let home: TempHome | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  home?.cleanup();
  home = undefined;
});

describe("platforms.webhook.host as users write it (spec 2.1; INSECURE_NO_AUTH on loopback, 2.2 rule 5)", () => {
  it("a bracketed IPv6 literal [::1] binds ::1 and counts as loopback; the Listening line writes it in brackets, as status does", async () => {
    gw = await startTestGateway({ config: webhookConfig(OPEN_ROUTE, { host: "[::1]" }) });
    const res = await postJson(`http://[::1]:${gw.gateway.port}/webhooks/open`, { a: 1 });
    expect(res.status).toBe(202);
    expect(gw.logs().some((l) => l.msg.startsWith(`[webhook] Listening on [::1]:${gw?.gateway.port} `))).toBe(
      true,
    );
  });

  it("0:0:0:0:0:0:0:1 is ::1: INSECURE_NO_AUTH is allowed and the log shows the short form", async () => {
    gw = await startTestGateway({ config: webhookConfig(OPEN_ROUTE, { host: "0:0:0:0:0:0:0:1" }) });
    expect(gw.logs().some((l) => l.msg.startsWith(`[webhook] Listening on [::1]:${gw?.gateway.port} `))).toBe(
      true,
    );
  });

  it("an IPv4-mapped address keeps its dotted quad, as RFC 5952 section 5 writes it: ::ffff:127.0.0.1, not ::ffff:7f00:1", async () => {
    gw = await startTestGateway({ config: webhookConfig(OPEN_ROUTE, { host: "::FFFF:127.0.0.1" }) });
    const res = await postJson(`http://[::ffff:127.0.0.1]:${gw.gateway.port}/webhooks/open`, { a: 1 });
    expect(res.status).toBe(202);
    expect(
      gw
        .logs()
        .some((l) => l.msg.startsWith(`[webhook] Listening on [::ffff:127.0.0.1]:${gw?.gateway.port} `)),
    ).toBe(true);
    expect(parseHostOption("0:0:0:0:0:ffff:7f00:2")).toBe("::ffff:127.0.0.2");
  });

  it("LOCALHOST in capitals is localhost: INSECURE_NO_AUTH is allowed", async () => {
    gw = await startTestGateway({ config: webhookConfig(OPEN_ROUTE, { host: "LOCALHOST" }) });
    expect(gw.logs().some((l) => l.msg.startsWith("[webhook] Listening on localhost:"))).toBe(true);
  });

  it.each([
    [
      "127.0.0.1:9000",
      '"127.0.0.1:9000" includes a port — write 127.0.0.1 and put the port in platforms.webhook.port',
    ],
    ["[::1]:8644", '"[::1]:8644" includes a port — write ::1 and put the port in platforms.webhook.port'],
    ["localhost:", '"localhost:" includes a port — write localhost'],
    ["http://127.0.0.1:8644/", '"http://127.0.0.1:8644/" is a URL — write the address only (e.g. 127.0.0.1)'],
    // Named here, not at listen as "is another gateway running?" (a [ read as part of a name).
    ["[::1", '"[::1" has a [ without its ] — write the address alone (::1), or in brackets ([::1])'],
    ["::1]", '"::1]" has a ] without its [ — write the address alone (::1), or in brackets ([::1])'],
    ["*", '"*" is not an address — write 0.0.0.0 to listen on every interface (:: for IPv6 too)'],
    // Blank: not "every interface" (which an empty host means to the servers) under an all-blank name.
    [
      "   ",
      "is blank (spaces only) — write an address to listen on, such as 127.0.0.1, or 0.0.0.0 for every interface, or leave the key out",
    ],
    // Refused as an address, not read as a host name that fails to resolve at each start.
    [
      "999.1.1.1",
      '"999.1.1.1" is not an IPv4 address: each of its four numbers must be 0 to 255 — write an address such as 127.0.0.1, or 0.0.0.0 for every interface',
    ],
    [
      "1::2::3",
      '"1::2::3" is not a valid IPv6 address — write one such as ::1 (or [::1]), or :: for every interface',
    ],
    [
      "0.0.0.0/0",
      '"0.0.0.0/0" is a network, not an address — write one address to listen on, such as 127.0.0.1, or 0.0.0.0 for every interface',
    ],
  ])(
    "host %s is refused at load naming file, key and fix (not a misleading 'address in use' at listen)",
    (host, message) => {
      const h = tempHome();
      home = h;
      const file = h.write("config.yaml", `platforms:\n  webhook:\n    enabled: true\n    host: "${host}"\n`);
      expect(() => loadConfig({ home: h.dir, env: {} })).toThrow(
        `${file}: platforms.webhook.host: ${message}`,
      );
    },
  );

  it("a problem with host written under extra is reported there", () => {
    const h = tempHome();
    home = h;
    const file = h.write("config.yaml", "platforms:\n  webhook:\n    extra:\n      host: 0.0.0.0:80\n");
    expect(() => loadConfig({ home: h.dir, env: {} })).toThrow(
      `${file}: platforms.webhook.extra.host: "0.0.0.0:80" includes a port`,
    );
  });

  it("--host takes the same spellings and refuses a port with a pointer to --port", () => {
    expect(parseHostOption("[::1]")).toBe("::1");
    expect(() => parseHostOption("[::1")).toThrow('--host: "[::1" has a [ without its ]');
    expect(() => parseHostOption("999.1.1.1")).toThrow(
      '--host: "999.1.1.1" is not an IPv4 address: each of its four numbers must be 0 to 255',
    );
    expect(() => parseHostOption("[fe80::1::2]")).toThrow(
      '--host: "[fe80::1::2]" is not a valid IPv6 address',
    );
    expect(parseHostOption("fe80::1%eth0")).toBe("fe80::1%eth0");
    expect(() => parseHostOption("127.0.0.1:9000")).toThrow(
      '--host: "127.0.0.1:9000" includes a port — write 127.0.0.1 and put the port in --port',
    );
  });
});
