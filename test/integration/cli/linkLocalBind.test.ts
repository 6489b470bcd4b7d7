import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { svc } from "./svc.js";

/**
 * A link-local IPv6 address (fe80::/10) is an address of one interface: it is bound with its zone,
 * `fe80::…%eth0`, which no URL can carry (`%25eth0` is not taken by the WHATWG URL parser either). Run
 * where this machine has such an address (most hosts with IPv6: every interface has one).
 */
const linkLocal = Object.entries(networkInterfaces())
  .flatMap(([name, list]) => (list ?? []).map((a) => ({ name, ...a })))
  .find((a) => a.family === "IPv6" && /^fe[89ab]/i.test(a.address) && a.scopeid !== 0);

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

function withConfig(host: string): TempHome {
  const h = tempHome();
  h.write(
    "config.yaml",
    stringify({
      platforms: {
        webhook: { enabled: true, host, port: 0, secret: "s3cr3t-value-long", routes: { r: {} } },
      },
    }),
  );
  return h;
}

describe.skipIf(linkLocal === undefined)(
  "a gateway bound to a link-local IPv6 address",
  { timeout: 60_000 },
  () => {
    const address = linkLocal?.address ?? "";
    const zoned = `${address}%${linkLocal?.name ?? ""}`;

    it("with its zone: svc gateway start reaches its /health, status shows it healthy, stop stops it", async () => {
      home = withConfig("127.0.0.1");
      const start = await svc(home, ["gateway", "start", "--host", zoned, "--timeout", "20"]);
      try {
        expect(start.stderr).toBe("");
        expect(start).toMatchObject({ code: 0, stdout: expect.stringContaining(`listening on [${zoned}]:`) });
        const status = await svc(home, ["gateway", "status"]);
        expect(status).toMatchObject({ code: 0, stdout: expect.stringContaining("Health: ok") });
      } finally {
        const stop = await svc(home, ["gateway", "stop"]);
        expect(stop.code).toBe(0);
      }
    });

    it("without its zone: the listen failure names the interface to add, not another gateway", async () => {
      home = withConfig(address);
      const check = await svc(home, ["config", "check"]);
      expect(check.code).toBe(1);
      expect(check.stdout + check.stderr).toContain(
        `${address} is a link-local address, which is bound with its interface — write ${zoned}`,
      );
      expect(check.stdout + check.stderr).not.toContain("another gateway");
    });
  },
);
