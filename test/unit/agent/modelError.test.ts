import { APICallError, JSONParseError } from "ai";
import { describe, expect, it } from "vitest";
import { describeModelError } from "../../../src/agent/modelError.js";
import { isRetryable } from "../../../src/agent/retry.js";

const URL = "http://127.0.0.1:11434/v1/chat/completions";
const answer = (statusCode: number, responseBody: string, message = "Bad") =>
  new APICallError({ message, url: URL, requestBodyValues: {}, statusCode, responseBody });

/** What a model run used, with its cap on tool results (the context-length advice names it). */
const WITH_TOOL_RESULTS = {
  model: "m",
  modelKey: "agent.model",
  keySent: true,
  maxTokens: 4096,
  maxToolResultChars: 100000,
};

describe("a model failure in one line (the failure notice, the journal, the log)", () => {
  it("an HTTP error names the endpoint, the status and the body", () => {
    expect(describeModelError(answer(401, '{"error":{"message":"bad key"}}'), [])).toBe(
      `model endpoint ${URL} answered HTTP 401: {"error":{"message":"bad key"}}`,
    );
  });

  it("a 400 refusing the output limit names agent.max_tokens; one that echoes the request, or refuses the parameter's name, does not", () => {
    const used = { model: "m", modelKey: "agent.model", keySent: true, maxTokens: 4096 };
    const hint =
      " — check agent.max_tokens (4096): the output tokens each model turn asks for, which the model (with the prompt, in its context) may not have room for";
    for (const body of [
      "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum context length is 4096 tokens and your request has 37 input tokens (4096 > 4096 - 37).",
      "You requested a total of 4196 tokens: 100 tokens from the input messages and 4096 tokens for the completion.",
      "max_tokens: 100000 > 64000, which is the maximum allowed number of output tokens for claude-x",
      "`max_tokens` must be less than or equal to `8192`",
    ])
      expect(describeModelError(answer(400, body), [], URL, used)).toBe(
        `model endpoint ${URL} answered HTTP 400: ${body}${hint}`,
      );
    expect(
      describeModelError(answer(422, "`inputs` tokens + `max_new_tokens` must be <= 4096"), [], URL, used),
    ).toMatch(/— check agent\.max_tokens \(4096\)/);
    const echoed = '{"detail":[{"msg":"Field required","input":{"model":"m","max_tokens":4096}}]}';
    const renamed =
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
    for (const body of [echoed, renamed])
      expect(describeModelError(answer(400, body), [], URL, used)).not.toContain("check agent.max_tokens");
    // A sampling request's own limit is not agent.max_tokens.
    const { maxTokens: _, ...sampling } = used;
    expect(describeModelError(answer(400, "max_tokens is too large: 9"), [], URL, sampling)).not.toContain(
      "—",
    );
  });

  it("the advice after a body cut at 300 characters is kept whole, however long the endpoint and the advice", () => {
    const used = WITH_TOOL_RESULTS;
    const body = `This model's maximum context length is 128000 tokens. However, you requested 134096 tokens (130000 in the messages, 4096 in the completion). ${"Please reduce the length of the messages. ".repeat(10)}`;
    const long = `http://model-gateway.internal.example.com:4000/${"team-a/".repeat(20)}v1/chat/completions`;
    const text = describeModelError(
      new APICallError({
        message: "Bad",
        url: long,
        requestBodyValues: {},
        statusCode: 400,
        responseBody: body,
      }),
      [],
      long,
      used,
    );
    expect(
      text.endsWith("lower agent.max_tool_result_chars (100000), or use a model with a larger context"),
    ).toBe(true);
  });

  it("a 400 saying the prompt alone is more than the model's context holds names agent.max_tool_result_chars, not agent.max_tokens", () => {
    const used = WITH_TOOL_RESULTS;
    const fills = (context: string) =>
      ` — the prompt and the run's tool results so far fill the model's context${context}: lower agent.max_tool_result_chars (100000), or use a model with a larger context`;
    for (const [body, context] of [
      // OpenAI's (and Groq's), vLLM's before 0.8: the messages alone past the context.
      [
        "This model's maximum context length is 128000 tokens. However, you requested 134096 tokens (130000 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
        " (128000 tokens)",
      ],
      [
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens (including 123 in the functions). Please reduce the length of the messages or functions.",
        " (128000 tokens)",
      ],
      // vLLM's.
      [
        "This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens. Please reduce the length of the input messages.",
        " (32768 tokens)",
      ],
      // OpenRouter's.
      [
        'This endpoint\'s maximum context length is 163840 tokens. However, you requested about 171624 tokens (167528 of text input, 4096 in the output). Please reduce the length of either one, or use the "middle-out" transform to compress your prompt automatically.',
        " (163840 tokens)",
      ],
      // llama.cpp's server.
      [
        '{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}',
        "",
      ],
      // The Messages API's, with its numbers and (a compatible server's) without.
      [
        '{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215123 tokens > 200000 maximum"}}',
        " (200000 tokens)",
      ],
      ['{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long"}}', ""],
    ] as const)
      expect(describeModelError(answer(400, body), [], URL, used)).toBe(
        `model endpoint ${URL} answered HTTP 400: ${body}${fills(context)}`,
      );
    // The messages fit, and the output limit on top of them does not: agent.max_tokens, as before.
    for (const body of [
      "This model's maximum context length is 8192 tokens. However, you requested 8500 tokens (4404 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.",
      "This endpoint's maximum context length is 8192 tokens. However, you requested about 8500 tokens (4404 of text input, 4096 in the output). Please reduce the length of either one.",
    ])
      expect(describeModelError(answer(400, body), [], URL, used)).toMatch(
        /— check agent\.max_tokens \(4096\)/,
      );
  });

  it("Azure OpenAI's 400 for a prompt its content filter refused (code content_filter) says what decides", () => {
    const used = { model: "gpt-4o", modelKey: "agent.model", keySent: true, maxTokens: 4096 };
    const azure = JSON.stringify({
      error: {
        message:
          "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
        type: null,
        param: "prompt",
        code: "content_filter",
        status: 400,
      },
    });
    expect(describeModelError(answer(400, azure), [], URL, used)).toMatch(
      / — the endpoint's content filter refused the prompt: change what the route's prompt or agent\.system_prompt asks for \(the event's payload is part of the prompt\); on Azure OpenAI, the deployment's content filter decides$/,
    );
    // Refused after a tool ran: the request holds the tool results, which may be what set the filter off.
    expect(
      describeModelError(answer(400, azure), [], URL, { ...used, toolResultsSent: true, route: "triage" }),
    ).toMatch(
      / — the endpoint's content filter refused the prompt, tool results included: what a tool read \(a page, a file\) may have set it off, or what the route's prompt or agent\.system_prompt asks for; on Azure OpenAI, the deployment's content filter decides$/,
    );
  });

  it("OpenAI's 400 for more than 128 tools says how a route or cron job is offered fewer", () => {
    const used = {
      model: "gpt-4.1",
      modelKey: "agent.model",
      keySent: true,
      maxTokens: 4096,
      route: "everything",
    };
    const body = JSON.stringify({
      error: {
        message:
          "Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length 303 instead.",
        type: "invalid_request_error",
        param: "tools",
        code: "array_above_max_length",
      },
    });
    expect(describeModelError(answer(400, body), [], URL, used)).toMatch(
      / — the run was offered 303 tools, more than the 128 the endpoint takes in one request: name only the MCP servers the route needs in its toolsets, or list the tools a server offers in mcp_servers\.<name>\.tools\.include$/,
    );
    expect(describeModelError(answer(400, body), [], URL, { ...used, route: "cron:nightly" })).toMatch(
      / — the run was offered 303 tools, more than the 128 the endpoint takes in one request: a cron job is offered every MCP server, so list the tools a server offers in mcp_servers\.<name>\.tools\.include$/,
    );
  });

  it("a refusal only a setting can change names it: 401 the key, 403 what the key may use, 404 the model and base_url", () => {
    const used = { model: "llama3", modelKey: "agent.model", keySent: true };
    expect(describeModelError(answer(401, '{"error":{"message":"bad key"}}'), [], URL, used)).toBe(
      `model endpoint ${URL} answered HTTP 401: {"error":{"message":"bad key"}} — check agent.api_key: the endpoint did not take it`,
    );
    expect(describeModelError(answer(401, ""), [], URL, { ...used, keySent: false })).toBe(
      `model endpoint ${URL} answered HTTP 401 (Bad) — the endpoint wants a key: set agent.api_key`,
    );
    expect(describeModelError(answer(403, "forbidden"), [], URL, used)).toMatch(
      /answered HTTP 403: forbidden — agent\.api_key may not make this request: .*agent\.model "llama3"/,
    );
    const ollama = '{"error":{"message":"model \\"llama3\\" not found, try pulling it first"}}';
    expect(describeModelError(answer(404, ollama), [], URL, used)).toBe(
      `model endpoint ${URL} answered HTTP 404: ${ollama} — check agent.model ("llama3") and agent.base_url`,
    );
    expect(
      describeModelError(answer(404, "404 page not found"), [], URL, { ...used, modelKey: "sampling.model" }),
    ).toMatch(/— check sampling\.model \("llama3"\) and agent\.base_url$/);
    // A base naming no API version (written as Ollama documents it): the base most servers answer under.
    const unversioned = new APICallError({
      message: "Not Found",
      url: "http://127.0.0.1:11434/chat/completions",
      requestBodyValues: {},
      statusCode: 404,
      responseBody: "404 page not found",
    });
    expect(describeModelError(unversioned, [], URL, used)).toBe(
      'model endpoint http://127.0.0.1:11434/chat/completions answered HTTP 404: 404 page not found — check agent.model ("llama3") and agent.base_url, which names no API version: most servers answer at http://127.0.0.1:11434/v1/chat/completions (svc appends only /chat/completions) — write http://127.0.0.1:11434/v1',
    );
    const deepseek = new APICallError({
      message: "Not Found",
      url: "https://api.deepseek.com/anthropic/messages",
      requestBodyValues: {},
      statusCode: 404,
      responseBody: "",
    });
    expect(describeModelError(deepseek, [], URL, used)).toMatch(
      /and agent\.base_url, which names no API version: most servers answer at https:\/\/api\.deepseek\.com\/anthropic\/v1\/messages \(.*\) — write https:\/\/api\.deepseek\.com\/anthropic\/v1$/,
    );
    // A versioned base (/v1, Gemini's /v1beta/openai) gets no such hint.
    for (const url of [URL, "https://generativelanguage.googleapis.com/v1beta/openai/chat/completions"])
      expect(
        describeModelError(
          new APICallError({
            message: "Not Found",
            url,
            requestBodyValues: {},
            statusCode: 404,
            responseBody: "x",
          }),
          [],
          URL,
          used,
        ),
      ).toMatch(/ — check agent\.model \("llama3"\) and agent\.base_url$/);
    // Refusals a retry or another request may change name no setting.
    expect(describeModelError(answer(429, "slow down"), [], URL, used)).toBe(
      `model endpoint ${URL} answered HTTP 429: slow down`,
    );
  });

  it("a server that refuses tools (Ollama's model without tool support, vLLM without tool calling, llama.cpp without --jinja) names the model and toolsets: [no_mcp]", () => {
    const used = { model: "deepseek-r1", modelKey: "agent.model", keySent: false };
    const fix =
      ' — agent.model "deepseek-r1" (or the server as it was started) takes no tools: use a model that calls tools, turn tool calling on in the server, or give the route toolsets: [no_mcp] so its runs offer none';
    const ollama =
      '{"error":{"message":"registry.ollama.ai/library/deepseek-r1:latest does not support tools","type":"api_error","param":null,"code":null}}';
    expect(describeModelError(answer(400, ollama), [], URL, used)).toBe(
      `model endpoint ${URL} answered HTTP 400: ${ollama}${fix}`,
    );
    const vllm =
      '{"object":"error","message":"\\"auto\\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}';
    expect(describeModelError(answer(400, vllm), [], URL, used)).toMatch(/takes no tools: /);
    const llamaCpp =
      '{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}';
    expect(describeModelError(answer(500, llamaCpp), [], URL, used)).toMatch(/toolsets: \[no_mcp\]/);
    expect(describeModelError(answer(400, '{"error":{"message":"bad"}}'), [], URL, used)).not.toMatch(/—/);
  });

  it("an HTML error page (a proxy's 502) is named by its title and size, not quoted as markup", () => {
    const page = `<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n`;
    const length = page.replace(/\s+/g, " ").trim().length;
    expect(describeModelError(answer(502, page), [])).toBe(
      `model endpoint ${URL} answered HTTP 502: an HTML page "502 Bad Gateway" (${length} characters, not shown)`,
    );
  });

  it("a 200 the SDK could not read is an answer svc cannot use, not an HTTP error", () => {
    expect(describeModelError(answer(200, "{not json", "Invalid JSON response"), [])).toBe(
      `model endpoint ${URL} gave an answer svc cannot use (HTTP 200): {not json`,
    );
    // OpenRouter answers an upstream failure during generation with 200 and an error body.
    expect(
      describeModelError(answer(200, '{"error":{"message":"Provider returned error","code":502}}'), []),
    ).toBe(
      `model endpoint ${URL} gave an answer svc cannot use (HTTP 200): {"error":{"message":"Provider returned error","code":502}}`,
    );
  });

  it("a 200 that is the other API's answer (agent.provider set to the wrong one) says to check agent.provider", () => {
    const used = { model: "m", modelKey: "agent.model", keySent: true };
    const messages = "http://127.0.0.1:8000/v1/messages";
    const chat =
      '{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}]}';
    const at = (url: string, body: string) =>
      new APICallError({
        message: "Invalid JSON response",
        url,
        requestBodyValues: {},
        statusCode: 200,
        responseBody: body,
      });
    expect(describeModelError(at(messages, chat), [], messages, used)).toBe(
      `model endpoint ${messages} gave an answer svc cannot use (HTTP 200): ${chat} — a Chat Completions answer, not the answer a /messages request gets: check agent.provider`,
    );
    const message = '{"id":"m1","type":"message","role":"assistant","content":[{"type":"text","text":"hi"}]}';
    expect(describeModelError(at(URL, message), [], URL, used)).toMatch(
      /— a Messages API answer, not the answer a \/chat\/completions request gets: check agent\.provider$/,
    );
    expect(describeModelError(at(URL, chat), [], URL, used)).not.toContain("agent.provider");
  });

  it("a 200 with an empty body says so, on one line (the SDK's parse error quotes the empty text over two)", () => {
    for (const responseBody of ["", " \r\n"]) {
      const empty = new APICallError({
        message: "Invalid JSON response",
        url: URL,
        requestBodyValues: {},
        statusCode: 200,
        responseBody,
        cause: new JSONParseError({
          text: responseBody,
          cause: new SyntaxError("Unexpected end of JSON input"),
        }),
      });
      expect(describeModelError(empty, [])).toBe(
        `model endpoint ${URL} gave an answer svc cannot use (HTTP 200): an empty body`,
      );
    }
  });

  it("an error message with line breaks is told on one line", () => {
    expect(describeModelError(new Error("first line\n  second line"), [])).toBe("first line second line");
  });

  it("an https:// endpoint unreachable for its TLS certificate, or speaking no TLS, names what to fix and is not retried", () => {
    const tls = "https://llm.corp.example/v1/chat/completions";
    const unreachable = (url: string, message: string, code: string) =>
      new APICallError({
        message: `Cannot connect to API: ${message}`,
        url,
        requestBodyValues: {},
        cause: Object.assign(new Error(message), { code }),
        isRetryable: true,
      });
    const cases: Array<[string, string, string]> = [
      [
        "self-signed certificate in certificate chain",
        "SELF_SIGNED_CERT_IN_CHAIN",
        " — its TLS certificate is not issued by a CA this system trusts (a private or self-signed CA): add that CA to the system trust store (update-ca-certificates), or start svc with SSL_CERT_FILE or NODE_EXTRA_CA_CERTS set to its PEM file",
      ],
      [
        "Hostname/IP does not match certificate's altnames: Host: llm.corp.example. is not in the cert's altnames: DNS:gw.corp.example",
        "ERR_TLS_CERT_ALTNAME_INVALID",
        " — its TLS certificate does not name the host of agent.base_url: write the host name the certificate lists in agent.base_url, or give the server a certificate for this host",
      ],
      [
        "certificate has expired",
        "CERT_HAS_EXPIRED",
        " — its TLS certificate is out of date: renew it on the server",
      ],
      [
        "C0A7F8E1:error:0A00010B:SSL routines:ssl3_get_record:wrong version number",
        "ERR_SSL_WRONG_VERSION_NUMBER",
        " — the server does not speak TLS on this port (a plain HTTP server answered): write http:// in agent.base_url, or the port where it serves HTTPS",
      ],
    ];
    for (const [message, code, hint] of cases) {
      const error = unreachable(tls, message, code);
      expect(describeModelError(error, [])).toBe(
        `model endpoint ${tls} could not be reached: Cannot connect to API: ${message}${hint}`.slice(0, 600),
      );
      expect(isRetryable(error)).toBe(false);
    }
    // A refused connection may pass (a server still starting): retried, with no TLS hint.
    const refused = unreachable(tls, "connect ECONNREFUSED 10.0.0.5:443", "ECONNREFUSED");
    expect(describeModelError(refused, [])).toBe(
      `model endpoint ${tls} could not be reached: Cannot connect to API: connect ECONNREFUSED 10.0.0.5:443 — nothing listens on port 443 of llm.corp.example: start the model server, or write its host and port in agent.base_url`,
    );
    expect(isRetryable(refused)).toBe(true);
  });

  it("a refused connection names the port nothing listens on, and a host name that does not resolve names the host: both in agent.base_url", () => {
    const unreachable = (url: string, message: string, code: string) =>
      new APICallError({
        message: `Cannot connect to API: ${message}`,
        url,
        requestBodyValues: {},
        cause: Object.assign(new Error(message), { code }),
        isRetryable: true,
      });
    expect(
      describeModelError(unreachable(URL, "connect ECONNREFUSED 127.0.0.1:11434", "ECONNREFUSED"), []),
    ).toBe(
      `model endpoint ${URL} could not be reached: Cannot connect to API: connect ECONNREFUSED 127.0.0.1:11434 — nothing listens on port 11434 of 127.0.0.1: start the model server, or write its host and port in agent.base_url`,
    );
    // The port a URL leaves out is its scheme's.
    const tls = "https://llm.corp.example/v1/chat/completions";
    expect(
      describeModelError(unreachable(tls, "connect ECONNREFUSED 10.0.0.5:443", "ECONNREFUSED"), []),
    ).toMatch(
      / — nothing listens on port 443 of llm\.corp\.example: start the model server, or write its host and port in agent\.base_url$/,
    );
    const typo = "https://api.openai.cmo/v1/chat/completions";
    expect(
      describeModelError(unreachable(typo, "getaddrinfo ENOTFOUND api.openai.cmo", "ENOTFOUND"), []),
    ).toBe(
      `model endpoint ${typo} could not be reached: Cannot connect to API: getaddrinfo ENOTFOUND api.openai.cmo — the host name api.openai.cmo is not known (DNS): check the host in agent.base_url`,
    );
  });

  it("a 200 whose body could not be read (the connection dropped in the middle, a broken gzip) says why", () => {
    const dropped = new TypeError("terminated", { cause: new Error("other side closed") });
    const unread = new APICallError({
      message: "Failed to process successful response",
      url: URL,
      requestBodyValues: {},
      statusCode: 200,
      cause: dropped,
    });
    expect(describeModelError(unread, [])).toBe(
      `model endpoint ${URL} gave an answer svc cannot use (HTTP 200): Failed to process successful response (terminated: other side closed)`,
    );
  });

  it("the key is cut out of the body before it is cut to length", () => {
    const key = "sk-probe-0123456789";
    expect(describeModelError(answer(200, `{"echo":"${key}"}`), [key])).toBe(
      `model endpoint ${URL} gave an answer svc cannot use (HTTP 200): {"echo":"[redacted]"}`,
    );
  });
});

describe("a sampling request too large for the endpoint", () => {
  it("says the MCP server's request is too large, not to lower agent.max_tool_result_chars (a sampling run has no tools)", () => {
    const tooLarge = answer(413, "<html>413 Request Entity Too Large</html>", "Payload Too Large");
    const sampling = { model: "m", modelKey: "sampling.model", keySent: true, maxToolResultChars: 100_000 };
    const text = describeModelError(tooLarge, [], URL, sampling);
    expect(text).toMatch(
      / — the MCP server's sampling request is larger than the server, or a proxy in front of it, takes: raise the server's limit \(nginx: client_max_body_size\)$/,
    );
    expect(text).not.toContain("max_tool_result_chars");
  });
});
