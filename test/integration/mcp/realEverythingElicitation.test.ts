import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { terminalApprovals } from "../../../src/actors/mcp/terminalApprovals.js";
import { everythingStdio } from "../../fixtures/mcp/everything.js";
import { entry, text, useHubs } from "./harness.js";

const ctx = useHubs();

/** A terminal where the user types `answers[field]` at each field's prompt (Enter elsewhere) and confirms. */
function terminal(answers: Record<string, string>) {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = new PassThrough();
  const asked: string[] = [];
  output.on("data", (chunk: Buffer) => {
    const line = chunk.toString();
    asked.push(line);
    const field = /^ {2}(\w+)/.exec(line)?.[1];
    if (field !== undefined) input.write(`${answers[field] ?? ""}\n`);
    if (line.includes("Send these answers")) input.write("y\n");
  });
  return { input, output, asked };
}

describe("server-everything's form elicitation answered at the terminal (svc mcp call)", () => {
  it("shows each field's choices and default, and sends lists, numbers, booleans and choice values as the schema types them", async () => {
    const tty = terminal({
      name: "Ada Lovelace",
      check: "y",
      titledSingleSelectEnum: "Wonder Woman",
      untitledMultipleSelectEnum: "Piano, Drums",
    });
    const hub = ctx.hub(
      ctx.home,
      { everything: entry(everythingStdio()) },
      { approvals: terminalApprovals(tty) },
    );
    const result = text(await hub.call("everything", "trigger-elicitation-request", {}));
    const raw = JSON.parse(result.slice(result.indexOf("Raw result: ") + "Raw result: ".length)) as unknown;
    expect(raw).toEqual({
      action: "accept",
      content: {
        name: "Ada Lovelace",
        check: true,
        firstLine: "It was a dark and stormy night.",
        integer: 42,
        number: 3.14,
        untitledSingleSelectEnum: "Monica",
        untitledMultipleSelectEnum: ["Piano", "Drums"],
        titledSingleSelectEnum: "hero-3",
        titledMultipleSelectEnum: ["fish-1"],
        legacyTitledEnum: "pet-1",
      },
    });
    const prompts = tty.asked.join("");
    expect(prompts).toContain(
      "  titledSingleSelectEnum (Choose your favorite hero) {hero-1 = Superman, hero-2 = Green Lantern, hero-3 = Wonder Woman} [hero-1]: ",
    );
    expect(prompts).toContain(
      "  untitledMultipleSelectEnum (Choose your favorite instruments) {Guitar, Piano, Violin, Drums, Bass} [Guitar]: ",
    );
    expect(prompts).toContain(
      "  legacyTitledEnum (Choose your favorite type of pet) {pet-1 = Cats, pet-2 = Dogs, pet-3 = Birds, pet-4 = Fish, pet-5 = Reptiles} [pet-1]: ",
    );
  });
});
