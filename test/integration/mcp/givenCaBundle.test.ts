import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Certs, makeCerts } from "../../fixtures/mcp/certs.js";
import { type FixtureHttp, startStreamableHttp } from "../../fixtures/mcp/httpServers.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { cliConfig, svc } from "../cli/svc.js";

/**
 * docs/configuration.md, "What a variable gives is never quoted back": an `ssl_verify` CA bundle whose path a
 * `${VAR}` gave, which did not verify the server's certificate, was quoted in the hint as the variable gave it
 * (`the CA bundle in mcp_servers.a.ssl_verify (/secret/dir/ca.pem)`), or, from `.env`, half hidden
 * (`([redacted]/ca.pem)`). It is named as config.yaml writes it, as the TLS files' own messages name it. A
 * real TLS server whose certificate the test CA issued; ssl_verify names another CA's bundle.
 */

let certs: Certs;
let certsDir: TempHome;
let server: FixtureHttp;
beforeAll(async () => {
  certsDir = tempHome();
  certs = await makeCerts(certsDir.dir);
  server = await startStreamableHttp({
    tls: { key: certs.read(certs.serverKey), cert: certs.read(certs.serverCert) },
  });
}, 60_000);
afterAll(async () => {
  await server?.close();
  certsDir.cleanup();
});

describe(`an ssl_verify CA bundle whose path a $\{VAR} gave, which did not verify the server`, () => {
  it.each(["the environment", ".env"])("from %s: svc mcp test and list name it as written", async (where) => {
    const home = tempHome();
    try {
      const servers = { a: { url: server.url, ssl_verify: `$\{CERTS}/other-ca.crt` } };
      home.write("config.yaml", stringify(cliConfig({}, { mcp_servers: servers })));
      const env = where === ".env" ? {} : { CERTS: certs.dir };
      if (where === ".env") home.write(".env", `CERTS=${certs.dir}\n`);
      const test = await svc(home, ["mcp", "test", "a"], { env });
      const list = await svc(home, ["mcp", "list"], { env });
      const hint = `the CA bundle in mcp_servers.a.ssl_verify ("$\{CERTS}/other-ca.crt" (the value it gives is not shown)) did not verify the server's certificate: point ssl_verify at the PEM bundle of the CA that issued it`;
      expect(test.code).toBe(1);
      expect(test.stderr).toBe(
        `svc: mcp_servers.a: fetch failed: unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE) — ${hint}\n`,
      );
      expect(list.stdout).toContain(` — ${hint}`);
      const seen = [test.stdout, test.stderr, list.stdout, list.stderr].join("\n");
      expect(seen).not.toContain(certs.dir);
      expect(seen).not.toContain("[redacted]");
    } finally {
      home.cleanup();
    }
  });
});
