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
});
