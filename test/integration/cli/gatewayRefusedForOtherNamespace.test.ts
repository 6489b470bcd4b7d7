import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { stringify } from "yaml";
import { pidNamespace } from "../../../src/io/pidNamespace.js";
import { type Contained, inContainer, killContainers, UNSHARE } from "../../helpers/container.js";
import { type TempHome, tempHome } from "../../helpers/home.js";
import { redisPerTest } from "../../helpers/redisPerTest.js";
import { cliConfig, svc } from "./svc.js";

/**
 * The gateway of this SVC_HOME runs in a container (`unshare --pid` stands in for it) and its gateway.pid is
 * gone; with state.backend: redis no state directory's lock refuses a second start first. `svc gateway run` on
 * the host claimed gateway.pid and wrote its claim over the container gateway's gateway.json before it tried
 * the port, so the refusal read a record with no address and said "another svc gateway … serves another
 * SVC_HOME"; and exiting, the refused run removed gateway.json: the record of the gateway that serves was lost.
 */

const redis = redisPerTest();
let home: TempHome | undefined;
afterEach(async () => {
  await killContainers();
  home?.cleanup();
  home = undefined;
});

/** Until `gateway` has printed a line matching `pattern`. */
async function said(gateway: Contained, pattern: RegExp): Promise<void> {
  await vi.waitFor(() => expect(gateway.output()).toMatch(pattern), { timeout: 60_000, interval: 50 });
}

describe.runIf(UNSHARE && pidNamespace() !== undefined)(
  "a start refused for the port of this home's gateway in another PID namespace",
  { timeout: 120_000 },
  () => {
    it("names that gateway as this home's, and leaves its gateway.json as it was", async () => {
      const server = await redis.start();
      home = tempHome();
      const dir = home.dir;
      home.write(
        "config.yaml",
        stringify(cliConfig({ a: { secret: "s" } }, { state: { backend: "redis", redis_url: server.url } })),
        0o600,
      );
      const pidFile = join(dir, "gateway.pid");
      const stateFile = join(dir, "gateway.json");
      const contained = inContainer(dir, ["gateway", "run", "--port", "0"]);
      await said(contained, /Listening on 127\.0\.0\.1:\d+/);
      // Its whole record, written once it listens.
      const record = await vi.waitFor(
        () => {
          const read = JSON.parse(readFileSync(stateFile, "utf8")) as Record<string, unknown>;
          expect(read.port).toBeTypeOf("number");
          return read;
        },
        { timeout: 10_000, interval: 50 },
      );
      const port = record.port as number;
      expect(record.pid_namespace).not.toBe(pidNamespace());
      rmSync(pidFile);

      const run = await svc(home, ["gateway", "run", "--port", String(port)]);
      expect(run.code, run.stdout + run.stderr).not.toBe(0);
      const told = run.stdout + run.stderr;
      expect(told).toContain(
        `the gateway of this SVC_HOME (${dir}) already listens on port ${port} (its GET /health names the instance ${stateFile} records), as pid ${record.pid} of another PID namespace (${record.pid_namespace}), which this process cannot signal`,
      );
      expect(told).not.toContain("serves another SVC_HOME");
      // The container's gateway's record is left as it was: the host's commands still find it.
      expect(JSON.parse(readFileSync(stateFile, "utf8"))).toEqual(record);
      await contained.kill();
    });
  },
);
