import { describe, expect, it } from "vitest";
import { buildProgram } from "../../../src/cli/program.js";

describe("svc webhook test --help", () => {
  it("names every source of the default event type, in the order the command uses them (docs/cli.md)", async () => {
    const program = await buildProgram(["node", "svc", "webhook", "test", "--help"]);
    const test = program.commands
      .find((c) => c.name() === "webhook")
      ?.commands.find((c) => c.name() === "test");
    const event = test?.options.find((o) => o.long === "--event");
    expect(event?.description).toMatch(
      /payload's event type as the gateway reads it — event_type, else type, webhookEvent, eventType — else the first of the route's events, else test/,
    );
  });
});

describe("svc webhook deliveries --help", () => {
  it("names the columns in the order the table prints them (docs/cli.md)", async () => {
    const program = await buildProgram(["node", "svc", "webhook", "deliveries", "--help"]);
    const deliveries = program.commands
      .find((c) => c.name() === "webhook")
      ?.commands.find((c) => c.name() === "deliveries");
    expect(deliveries?.description()).toMatch(
      /newest first: time, delivery ID, route, event, answer, run, delivery, note \(redelivery of <id>\)$/,
    );
  });
});

describe("svc gateway start --help", () => {
  it("writes the default wait as the other options write theirs, not as a quoted string", async () => {
    const program = await buildProgram(["node", "svc", "gateway", "start", "--help"]);
    const start = program.commands
      .find((c) => c.name() === "gateway")
      ?.commands.find((c) => c.name() === "start");
    expect(start?.helpInformation()).toMatch(/how long to wait for \/health \(default 15\)/);
    expect(start?.helpInformation()).not.toContain('"15"');
  });
});
