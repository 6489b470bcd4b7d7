import { afterEach, describe, expect, it } from "vitest";
import { checkConfig } from "../../../src/cli/config/check.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

let dir: TempHome;
afterEach(() => dir.cleanup());

const config = (host: string) =>
  `platforms:\n  webhook:\n    enabled: true\n    host: "${host}"\n    port: 8650\n`;

/**
 * svc config check's summary gave an IPv6 bind as `webhook on ::1:8644`, an address nothing can use as
 * written, while svc gateway status and start print `[::1]:8644`.
 */
describe("svc config check: the address in its summary", () => {
  it("is host:port, with an IPv6 host in brackets as svc gateway status writes it", async () => {
    dir = tempHome();
    dir.write("config.yaml", config("::1"));
    const v6 = await checkConfig({ home: dir.dir, env: {} });
    expect(v6.summary).toMatch(/^webhook on \[::1\]:8650, /);
    dir.write("config.yaml", config("127.0.0.1"));
    const v4 = await checkConfig({ home: dir.dir, env: {} });
    expect(v4.summary).toMatch(/^webhook on 127\.0\.0\.1:8650, /);
  });
});
