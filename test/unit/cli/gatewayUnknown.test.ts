import { describe, expect, it } from "vitest";
import { unknownGatewayCommand } from "../../../src/cli/gatewayUnknown.js";

describe("svc gateway <unknown>", () => {
  it("names the gateway command a misspelling means, as commander does in the other groups", () => {
    expect(unknownGatewayCommand("stauts")).toBe(
      "unknown command 'gateway stauts' — did you mean svc gateway status? — use svc gateway run|start|stop|status|setup (svc gateway --help)",
    );
    expect(unknownGatewayCommand("strat")).toContain("did you mean svc gateway start?");
    expect(unknownGatewayCommand("setpu")).toContain("did you mean svc gateway setup?");
    expect(unknownGatewayCommand("Stop")).toContain("did you mean svc gateway stop?");
  });

  it("a name near no command gets the list alone", () => {
    expect(unknownGatewayCommand("frob")).toBe(
      "unknown command 'gateway frob' — use svc gateway run|start|stop|status|setup (svc gateway --help)",
    );
  });

  it("restart, reload and logs, which other tools have, say what does their job here, not 'did you mean start?'", () => {
    expect(unknownGatewayCommand("restart", "/srv/svc")).toBe(
      "unknown command 'gateway restart' — svc gateway has no restart: run svc gateway stop, then svc gateway start (a change to config.yaml or .env needs no restart unless the gateway's log says so: kill -HUP $(cat /srv/svc/gateway.pid) reloads them)",
    );
    expect(unknownGatewayCommand("reload", "/srv/svc")).toBe(
      "unknown command 'gateway reload' — the gateway reloads config.yaml and .env on SIGHUP: kill -HUP $(cat /srv/svc/gateway.pid)",
    );
    expect(unknownGatewayCommand("logs", "/srv/my svc")).toBe(
      "unknown command 'gateway logs' — svc gateway has no logs command: the gateway writes its log to '/srv/my svc/logs/gateway.log' (tail -f it); svc gateway start keeps the gateway's own output in '/srv/my svc/logs/gateway.out'",
    );
    expect(unknownGatewayCommand("Restart")).toContain("kill -HUP $(cat $SVC_HOME/gateway.pid)");
  });
});
