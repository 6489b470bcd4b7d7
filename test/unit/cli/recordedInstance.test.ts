import { writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { askElsewhere } from "../../../src/cli/gatewayLookup.js";
import { svcPaths } from "../../../src/config/paths.js";
import { GatewayElsewhereError, gatewayStateFile, readGatewayState } from "../../../src/io/gatewayState.js";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { startTestGateway, type TestGateway, webhookConfig } from "../../helpers/gateway.js";

/**
 * gateway.json's `instance` is the id a gateway's /health 200 names in its `Svc-Instance` header: an answer
 * without it at the recorded address is another listener's. One edited by hand into no id (null, a number,
 * "", spaces alone) named nothing any gateway sends, so the healthy gateway the file records was taken for another
 * listener ("other"); it is read as a file that records no instance (an older svc's), whose gateway any 200
 * at its address stands for. An id with spaces around it is read as the id.
 */

const ELSEWHERE = "pid:[4026530000]";
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

/** The gateway's home's gateway.json as pid 4242 of another PID namespace would write it, with `instance`. */
function recordElsewhere(running: TestGateway, instance: unknown) {
  const paths = svcPaths(running.home.dir);
  writeFileSync(
    gatewayStateFile(paths),
    JSON.stringify({
      pid: 4242,
      host: "127.0.0.1",
      port: running.gateway.port,
      started_at: new Date().toISOString(),
      pid_namespace: ELSEWHERE,
      instance,
    }),
  );
  return { paths, err: new GatewayElsewhereError(paths, 4242, ELSEWHERE, pidNamespace() ?? "-") };
}

describe("a gateway.json whose instance is no id", { timeout: 60_000 }, () => {
  it.each([
    ["null", null],
    ["a number", 5],
    ["empty", ""],
    ["spaces alone", "  "],
  ])(
    "(%s) is read as recording none: the healthy gateway at its address answers for it, not another listener",
    async (_, instance) => {
      gw = await startTestGateway({ config: webhookConfig({ a: { secret: "s" } }) });
      const { paths, err } = recordElsewhere(gw, instance);
      const read = readGatewayState(gatewayStateFile(paths));
      expect(read).toMatchObject({ pid: 4242, port: gw.gateway.port });
      expect(read).not.toHaveProperty("instance");
      expect(await askElsewhere(paths, err)).toEqual({
        answers: true,
        address: `127.0.0.1:${gw.gateway.port}`,
      });
    },
  );

  it("while a string names that gateway or another: its own id answers, another one's does not", async () => {
    gw = await startTestGateway({ config: webhookConfig({ a: { secret: "s" } }) });
    const address = `127.0.0.1:${gw.gateway.port}`;
    const own = recordElsewhere(gw, gw.gateway.instance);
    expect(await askElsewhere(own.paths, own.err)).toEqual({ answers: true, address });
    const other = recordElsewhere(gw, "another-gateways-id");
    expect(await askElsewhere(other.paths, other.err)).toEqual({ answers: false, address, other: true });
  });

  it("is read without the spaces around it: the id of the healthy gateway with a space or tab around it still answers", async () => {
    gw = await startTestGateway({ config: webhookConfig({ a: { secret: "s" } }) });
    const id = gw.gateway.instance as string;
    const { paths, err } = recordElsewhere(gw, `  ${id}\t`);
    expect(readGatewayState(gatewayStateFile(paths))?.instance).toBe(id);
    expect(await askElsewhere(paths, err)).toEqual({
      answers: true,
      address: `127.0.0.1:${gw.gateway.port}`,
    });
  });
});
