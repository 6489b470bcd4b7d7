import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createRunner } from "../../../src/actors/agent/index.js";
import { type AgentRequest, AgentRunFailure } from "../../../src/actors/agent/runner.js";
import { loadConfig } from "../../../src/config/load.js";
import { captureLogger } from "../../fakes/logCapture.js";
import { type FakeModel, startFakeOpenAI } from "../../fakes/openaiServer.js";
import { closedPort } from "../../helpers/closedPort.js";
import { type TempHome, tempHome } from "../../helpers/home.js";

const NOT_SHOWN = "(the value it gives is not shown)";
const v = (name: string) => `$\{${name}}`;

/**
 * docs/configuration.md, "What a variable gives is never quoted back", in a model run: an `agent.model` or
 * `agent.base_url` a `${VAR}` gave is named as config.yaml writes it in the run's failure (the log, the
 * journal, the failure notice), its retry line and its INFO line, and so is the base's host. Each value
 * below holds SECRET (the host: localhost, the loopback name, which is what the endpoint is reached by).
 */
let model: FakeModel;
beforeAll(async () => {
  model = await startFakeOpenAI();
});
afterAll(() => model.close());

let home: TempHome | undefined;
afterEach(() => {
  home?.cleanup();
  home = undefined;
});

const REQUEST: AgentRequest = {
  route: "r",
  event: "e",
  deliveryId: "d1",
  prompt: "p",
  toolsets: ["no_mcp"],
  profile: undefined,
};

/** A model runner of agent settings `yaml` (under `agent:`) with `.env` holding `dotenv`; its log lines. */
function runnerOf(yaml: string, dotenv: string) {
  const h = tempHome();
  home = h;
  h.write("config.yaml", `agent:\n${yaml}`);
  h.write(".env", dotenv);
  const { config } = loadConfig({ home: h.dir, env: {} });
  const log = captureLogger();
  // Retries wait on no clock: the test moves on at once.
  const sleep = async () => {};
  return { runner: createRunner(config.agent, { logger: log.logger, sleep }), log };
}

describe(`agent.model and agent.base_url a $\{VAR} gave, in a model run`, () => {
  it("a refused model name: the failure and the run's line name agent.model and the base as the file writes them", async () => {
    const base = model.baseUrl.replace("127.0.0.1", "localhost");
    const { runner, log } = runnerOf(
      `  provider: openai\n  model: "${v("MODEL")}"\n  base_url: "${v("BASE")}"\n  api_key: k\n  retries: 1\n`,
      `MODEL=SECRET-model\nBASE=${base}\n`,
    );
    const body = '{"error":{"message":"Model Not Exist","type":"invalid_request_error"}}';
    model.script({ status: 503, body: '{"error":{"message":"busy"}}' }, { status: 404, body });
    const failure = await runner.run(REQUEST, new AbortController().signal).then(
      () => new Error("the run succeeded"),
      (err: Error) => err,
    );
    const quotedBase = `"${v("BASE")}" ${NOT_SHOWN}`;
    expect(failure.message).toBe(
      `model endpoint ${quotedBase}/chat/completions answered HTTP 404: ${body} — check agent.model ("${v("MODEL")}" ${NOT_SHOWN}) and agent.base_url`,
    );
    const lines = log.messages();
    expect(lines.join("\n")).not.toMatch(/SECRET|localhost/);
    expect(lines).toContainEqual(
      expect.stringMatching(/^\[agent\] r: model call failed \(model endpoint "\$\{BASE\}" \(the value/),
    );
    expect(lines).toContainEqual(
      expect.stringContaining(`: error (${failure.message}) — openai/"${v("MODEL")}" ${NOT_SHOWN}, 0 steps`),
    );
    // The record the journal keeps (`run`) names the model as the file writes it too.
    expect(failure).toBeInstanceOf(AgentRunFailure);
    const record = (failure as AgentRunFailure).record;
    expect(record.model).toBe(v("MODEL"));
    expect(JSON.stringify(record)).not.toMatch(/SECRET|localhost/);
  });

  it("a run that succeeds: its record keeps agent.model as the file writes it", async () => {
    const { runner } = runnerOf(
      `  provider: openai\n  model: "${v("MODEL")}"\n  base_url: "${model.baseUrl}"\n  api_key: k\n`,
      "MODEL=SECRET-model\n",
    );
    model.script({ text: "done" });
    const reply = await runner.run(REQUEST, new AbortController().signal);
    expect(reply.text).toBe("done");
    expect(reply.record?.model).toBe(v("MODEL"));
    expect(JSON.stringify(reply.record)).not.toContain("SECRET");
  });

  it("a base nothing listens on: its host is named as the host of the variable's text", async () => {
    const port = await closedPort();
    const { runner } = runnerOf(
      `  provider: openai\n  model: m\n  base_url: "${v("BASE")}"\n  api_key: k\n  retries: 0\n`,
      `BASE=http://localhost:${port}/SECRET/v1\n`,
    );
    const failure = await runner.run(REQUEST, new AbortController().signal).then(
      () => new Error("the run succeeded"),
      (err: Error) => err,
    );
    expect(failure.message).not.toMatch(/SECRET|localhost/);
    expect(failure.message).toMatch(
      new RegExp(
        `^model endpoint "\\$\\{BASE\\}" \\(the value it gives is not shown\\)/chat/completions could not be reached: .* — nothing listens on port ${port} of <the host of "\\$\\{BASE\\}" \\(the value it gives is not shown\\)>: start the model server`,
      ),
    );
  });

  it("a base whose host has capitals: the endpoint, as fetch writes it (its host in lower case), is named as the file writes it", async () => {
    const port = await closedPort();
    const { runner } = runnerOf(
      `  provider: openai\n  model: m\n  base_url: "${v("BASE")}"\n  api_key: k\n  retries: 0\n`,
      `BASE=http://LocalHost:${port}/SECRET-PATH/v1\n`,
    );
    const failure = await runner.run(REQUEST, new AbortController().signal).then(
      () => new Error("the run succeeded"),
      (err: Error) => err,
    );
    expect(failure.message).not.toMatch(/SECRET|localhost/i);
    expect(failure.message).toMatch(
      /^model endpoint "\$\{BASE\}" \(the value it gives is not shown\)\/chat\/completions could not be reached: /,
    );
  });
});
