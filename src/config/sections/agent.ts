import { z } from "zod";
import { DEFAULT_MAX_TOOL_RESULT_CHARS } from "../../agent/toolResultCap.js";
import { quotingIssue } from "../describe.js";
import { HEADER_CONTROL, HEADER_NOT_LATIN1 } from "../headerValue.js";
import { unreadPlaceholderProblem, unsetVariablesIn } from "../interpolate.js";
import { nearMiss } from "../nearMiss.js";
import { timerSeconds } from "../timerSeconds.js";

export const AGENT_PROVIDERS = ["echo", "command", "openai", "anthropic"] as const;
export type AgentProvider = (typeof AGENT_PROVIDERS)[number];

/** Providers that call a model over HTTP (docs/agent.md). */
export const MODEL_PROVIDERS: ReadonlySet<string> = new Set(["openai", "anthropic"]);

/** Where a model provider sends its requests when `base_url` is not set. */
export const DEFAULT_BASE_URLS = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com/v1",
} as const;

/**
 * The base a model's requests go under: `base_url` (else the provider's default) without trailing slashes.
 * Anthropic's own API named without its version, `https://api.anthropic.com` (as Anthropic's SDKs take
 * `ANTHROPIC_BASE_URL`), is taken as `https://api.anthropic.com/v1`, as the AI SDK's Anthropic provider
 * takes it; any other base is used as written (svc appends only `/messages` or `/chat/completions`).
 */
export function modelBaseUrl(provider: "openai" | "anthropic", baseUrl: string | undefined): string {
  const base = (baseUrl ?? DEFAULT_BASE_URLS[provider]).replace(/\/+$/, "");
  if (provider !== "anthropic" || !URL.canParse(base)) return base;
  const url = new URL(base);
  const ownApi = url.protocol === "https:" && url.host === "api.anthropic.com" && url.pathname === "/";
  return ownApi && url.search === "" && url.hash === "" ? `${url.origin}/v1` : base;
}

/**
 * Why `url` cannot be a model endpoint, or undefined when it can. `given`: the file's text as quoted, when a
 * `${VAR}` gave the value: no part of the value is written back that the file's text does not write itself.
 */
export function baseUrlProblem(url: string, given?: string): string | undefined {
  // A host and port written without a scheme: `localhost:11434/v1` would parse as the scheme "localhost"
  // (`[::1]:11434/v1` not at all).
  // The base to write, without a query or fragment (refused below anyway, and not quoted: it may carry a key).
  if (/^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d+(?:[/?#]|$)/.test(url))
    return `no scheme — write http://${given === undefined ? url.replace(/[?#].*$/s, "") : "<host:port/path>"} (or https://)`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `not a URL — write http://host:port/v1 or https://host/v1`;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    return `${parsed.protocol.replace(/:$/, "")} is not supported — the model endpoint must be http:// or https://`;
  if (parsed.username !== "" || parsed.password !== "")
    return "credentials in the URL are not allowed — put the key in agent.api_key";
  // `http://127.0.0.1:/v1`, as `http://127.0.0.1:${MODEL_PORT}/v1` renders with MODEL_PORT left blank: the
  // URL standard reads the empty port as the scheme's default (80 or 443), so every run would call that port.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*:(?:[/?#]|$)/.test(url))
    return `the port after ${given === undefined || given.includes(`${parsed.hostname}:`) ? `"${parsed.hostname}:"` : "the host"} is empty (a \${VAR} there that gives an empty value?) — write the port the model server listens on, or leave out the ":" for the scheme's default`;
  // `https://<res>.openai.azure.com/openai/deployments/<d>?api-version=...`, as Azure's portal shows a deployment:
  // the path is appended after the whole text, so every run would post to `...?api-version=.../chat/completions`.
  // (Not quoted: a query may carry a key.)
  if (/[?#]/.test(url))
    return 'a query or fragment (from "?" or "#" on) cannot be part of it — svc appends /chat/completions or /messages to base_url, which would land inside it; write the base alone (Azure OpenAI: https://<resource>.openai.azure.com/openai/v1, which needs no api-version)';
  return undefined;
}

/** The most runs one gateway runs at once (`agent.max_concurrent_runs`). */
export const MAX_CONCURRENT_RUNS = 1000;

/** The most steps (`agent.max_steps`) and retries (`agent.retries`) a run takes. */
export const MAX_STEPS = 1000;
export const MAX_RETRIES = 10;

/** The longest `gateway.drain_timeout_seconds`. */
export const MAX_DRAIN_SECONDS = 3600;

/**
 * Why `key` cannot travel in a request header, or undefined when it can. fetch refuses such a key on every
 * run with an error naming neither the key nor the fix ("Cannot convert argument to a ByteString because the
 * character at index 15 has a value of 8230", "Headers.append: ... is an invalid header value"), as a key
 * copied with a line break, a zero-width space or a `…` would be. The key itself is never quoted.
 * `failing`: what would fail (the agent's runs, or `tools.web_search`'s searches).
 */
export function apiKeyHeaderProblem(
  key: string | undefined,
  failing = "every run would fail before calling the endpoint",
): string | undefined {
  if (key === undefined) return undefined;
  const control = HEADER_CONTROL.exec(key);
  const wide = HEADER_NOT_LATIN1.exec(key);
  if (control === null && wide === null) return undefined;
  const what =
    control !== null
      ? /[\0\r\n]/.test(key)
        ? "a line break or NUL character"
        : "a control character (such as an escape or DEL)"
      : "a character outside Latin-1 (such as … or a zero-width space, as copying a key can add)";
  return `contains ${what}, which an HTTP header cannot carry: ${failing} — copy the key again (check it, not shown here, in config.yaml or .env)`;
}

/**
 * A value without the spaces and tabs around it. A key pasted with one (`KEY="sk-... "` in .env): HTTP
 * drops them from a header value, so the endpoint takes the key all the same, while an echo of it (a model
 * repeating it, an error quoting it) would not match the untrimmed text and be shown rather than hidden.
 */
export function withoutSurroundingSpaces(key: string): string {
  return key.replace(/^[ \t]+|[ \t]+$/g, "");
}

/**
 * Services and servers people name as the provider (as other tools take them): each speaks the OpenAI Chat
 * Completions API (`provider: openai` with its `base_url`), or is Anthropic's (`claude`, the one without). Keyed by the name
 * in lower case without `-`, `_`, `.` or spaces; the base URLs are docs/agent.md's.
 */
const SERVICE_PROVIDERS: Readonly<Record<string, { provider: "openai" | "anthropic"; base_url?: string }>> = {
  claude: { provider: "anthropic" },
  ollama: { provider: "openai", base_url: "http://127.0.0.1:11434/v1" },
  vllm: { provider: "openai", base_url: "http://127.0.0.1:8000/v1" },
  lmstudio: { provider: "openai", base_url: "http://127.0.0.1:1234/v1" },
  openrouter: { provider: "openai", base_url: "https://openrouter.ai/api/v1" },
  gemini: { provider: "openai", base_url: "https://generativelanguage.googleapis.com/v1beta/openai" },
  google: { provider: "openai", base_url: "https://generativelanguage.googleapis.com/v1beta/openai" },
  groq: { provider: "openai", base_url: "https://api.groq.com/openai/v1" },
  deepseek: { provider: "openai", base_url: "https://api.deepseek.com/v1" },
  mistral: { provider: "openai", base_url: "https://api.mistral.ai/v1" },
  azure: { provider: "openai", base_url: "https://<resource>.openai.azure.com/openai/v1" },
  azureopenai: { provider: "openai", base_url: "https://<resource>.openai.azure.com/openai/v1" },
};

/**
 * The API itself as other clients name a provider for it (the AI SDK's `openai-compatible`, `openai_chat`), in
 * lower case without `-`, `_`, `.` or spaces: svc's `openai` provider is that API, whatever server answers it.
 */
const CHAT_COMPLETIONS_NAMES: ReadonlySet<string> = new Set([
  "openaicompatible",
  "openaichat",
  "chatcompletions",
]);

/**
 * `did you mean "openai"? ` for a provider one or two letters from a known one (`opanai`); for a service's
 * name (`ollama`, `claude`), the provider that speaks its API and the `base_url` to write; else nothing.
 * `given`: a `${VAR}` gave the value, which is then not written back.
 */
function meantProvider(value: string, given = false): string {
  const name = value.toLowerCase().replace(/[-_.\s]/g, "");
  if (CHAT_COMPLETIONS_NAMES.has(name))
    return "write provider: openai (it speaks any OpenAI-compatible Chat Completions endpoint: set base_url to that endpoint's base, such as http://127.0.0.1:8000/v1); ";
  const service = SERVICE_PROVIDERS[name];
  if (service !== undefined)
    return service.base_url === undefined
      ? `write provider: ${service.provider} (Claude's models are served by Anthropic's Messages API); `
      : `write provider: ${service.provider} and base_url: ${service.base_url} (${given ? "that service" : value} serves the OpenAI-compatible Chat Completions API there); `;
  const meant = nearMiss(value, AGENT_PROVIDERS);
  return meant === undefined ? "" : `did you mean "${meant}"? `;
}

/**
 * The agent runner (docs/agent.md): `echo` replies with the prompt, `command` runs an argv,
 * `openai` (any Chat Completions endpoint) and `anthropic` (the Messages API) run a model with a tool loop.
 */
export const agentSchema = z
  .strictObject({
    provider: z
      .string()
      .default("echo")
      .superRefine((value, ctx) => {
        if (!(AGENT_PROVIDERS as readonly string[]).includes(value))
          ctx.addIssue(
            quotingIssue(
              value,
              (quoted, given) =>
                `unknown provider ${quoted} — ${meantProvider(value, given)}use one of ${AGENT_PROVIDERS.join(", ")}`,
            ),
          );
      })
      .transform((value) => value as AgentProvider),
    // The program must be named; an argument may be empty (`--prefix ""`), as an MCP server's args may.
    command: z
      .array(z.string())
      .min(1)
      .refine((argv) => argv[0] !== "", {
        path: [0],
        message: "names no program — write the program to run first, then its arguments",
      })
      .optional(),
    model: z.string().min(1).optional(),
    base_url: z.string().min(1).optional(),
    /**
     * Never logged, never in an error message: the issues below name the key, not its value. An empty key
     * (`${KEY}` with `KEY=` left blank) is refused like any empty text: it would send no key at all.
     */
    api_key: z
      .string()
      .min(1)
      // One of spaces alone is kept as written, for the check below to name it blank (an empty one is named by `min`).
      .transform((key) => (key.trim() === "" ? key : withoutSurroundingSpaces(key)))
      .optional(),
    max_steps: z.number().int().min(1).max(MAX_STEPS).default(10),
    max_tokens: z.number().int().min(1).default(4096),
    system_prompt: z.string().optional(),
    retries: z.number().int().min(0).max(MAX_RETRIES).default(2),
    timeout_seconds: timerSeconds(600),
    // Each is a run slot made at start: a million took minutes and gigabytes before the listener opened.
    max_concurrent_runs: z.number().int().positive().max(MAX_CONCURRENT_RUNS).default(4),
    /** The most characters of one tool result a model is sent; 0: no cap (docs/agent.md, Tools in a run). */
    max_tool_result_chars: z
      .number()
      .int()
      .min(0, "negative — write a number of characters such as 100000, or 0 for no cap")
      .default(DEFAULT_MAX_TOOL_RESULT_CHARS),
  })
  .superRefine((agent, ctx) => {
    if (agent.provider === "command" && agent.command === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["command"],
        message: 'missing — provider "command" needs command: [executable, args...]',
      });
    }
    if (MODEL_PROVIDERS.has(agent.provider) && agent.model === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["model"],
        message: `missing — provider "${agent.provider}" needs a model (for example model: ${agent.provider === "anthropic" ? "claude-sonnet-4-5" : "gpt-4.1-mini"})`,
      });
    }
    // An unset `${VAR}` keeps its text: the model would be asked for "${MODEL}", the URL read as garbage,
    // the key sent as "${OPENAI_API_KEY}"; so would a form svc does not read, as a webhook secret's is refused.
    // The message of an unset one names the .env file where it is formatted (formatIssue knows config.yaml's path).
    const checkLeft = (key: string, value: string | undefined, orElse?: string): boolean => {
      if (value === undefined || !MODEL_PROVIDERS.has(agent.provider)) return false;
      const name = unsetVariablesIn(value)[0];
      if (name !== undefined) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `\${${name}} is not set`,
          params: { unsetVariable: name, ...(orElse === undefined ? {} : { orElse }) },
        });
        return true;
      }
      // `$OPENAI_API_KEY` as a shell writes it: not replaced, its text would be sent. The value is not quoted.
      const problem = /^\$[A-Za-z_][A-Za-z0-9_]*$/.test(value)
        ? "a $ followed by a name is how a shell writes a variable, but svc replaces only ${NAME} (with braces), so this text itself would be used — write it as ${NAME}, in quotes"
        : unreadPlaceholderProblem(value, key === "api_key");
      if (problem === undefined) return false;
      ctx.addIssue({ code: "custom", path: [key], message: problem });
      return true;
    };
    // `${MODEL}` with `MODEL=` set to spaces, or a value of spaces: every run would ask for a model named blank.
    // An empty one is refused as any empty text is (naming the variable that gave it), and only so.
    const blank = (value: string | undefined) => value !== undefined && value !== "" && value.trim() === "";
    if (blank(agent.model) && MODEL_PROVIDERS.has(agent.provider))
      ctx.addIssue({
        code: "custom",
        path: ["model"],
        message: "blank — write the model's name (for example model: gpt-4.1-mini)",
      });
    else checkLeft("model", agent.model);
    if (blank(agent.base_url) && MODEL_PROVIDERS.has(agent.provider))
      ctx.addIssue({
        code: "custom",
        path: ["base_url"],
        message:
          "blank (spaces only) — write the endpoint's base (such as http://127.0.0.1:8000/v1), or remove base_url",
      });
    else if (
      agent.base_url !== undefined &&
      agent.base_url !== "" &&
      !checkLeft("base_url", agent.base_url)
    ) {
      const url = withoutSurroundingSpaces(agent.base_url);
      if (baseUrlProblem(url) !== undefined)
        ctx.addIssue(
          quotingIssue(
            agent.base_url,
            (quoted, given) => baseUrlProblem(url, given ? quoted : undefined) ?? "",
            { path: ["base_url"] },
          ),
        );
    }
    if (blank(agent.api_key) && MODEL_PROVIDERS.has(agent.provider))
      ctx.addIssue({
        code: "custom",
        path: ["api_key"],
        message: "blank (spaces only) — write the key, or remove api_key for a local endpoint",
      });
    else if (!checkLeft("api_key", agent.api_key, "remove api_key for a local endpoint")) {
      const problem = apiKeyHeaderProblem(agent.api_key);
      if (problem !== undefined && MODEL_PROVIDERS.has(agent.provider))
        ctx.addIssue({ code: "custom", path: ["api_key"], message: problem });
    }
  })
  // A model name or base URL pasted with a space after it (`MODEL="gpt-4.1-mini "` in .env) would be sent
  // with it: the endpoint answers 404 for a model or a path nobody sees the space in. Trimmed after the
  // checks above, which name a blank one as such.
  .transform((agent) => ({
    ...agent,
    ...(agent.model === undefined ? {} : { model: withoutSurroundingSpaces(agent.model) }),
    ...(agent.base_url === undefined ? {} : { base_url: withoutSurroundingSpaces(agent.base_url) }),
  }))
  .default({
    provider: "echo",
    max_steps: 10,
    max_tokens: 4096,
    retries: 2,
    timeout_seconds: 600,
    max_concurrent_runs: 4,
    max_tool_result_chars: DEFAULT_MAX_TOOL_RESULT_CHARS,
  });
export type AgentSettings = z.infer<typeof agentSchema>;

export const gatewaySchema = z
  .strictObject({
    multiplex_profiles: z.boolean().default(false),
    /** Answer to tool approvals and form elicitations when no terminal is attached. */
    approvals: z.enum(["deny", "allow"]).default("deny"),
    /**
     * How long SIGINT/SIGTERM waits for agent runs before saving the unfinished ones for the next start;
     * keep it under the supervisor's kill timeout (docker stop: 10 s), or the runs die with the process.
     */
    drain_timeout_seconds: z.number().min(0).max(MAX_DRAIN_SECONDS).default(30),
  })
  .default({ multiplex_profiles: false, approvals: "deny", drain_timeout_seconds: 30 });
export type GatewaySettings = z.infer<typeof gatewaySchema>;
