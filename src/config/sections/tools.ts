import { z } from "zod";
import { unsetVariablesIn } from "../interpolate.js";
import { timerSeconds } from "../timerSeconds.js";
import { apiKeyHeaderProblem, withoutSurroundingSpaces } from "./agent.js";

/** The most results a web search returns (`tools.web_search.max_results`). */
export const MAX_SEARCH_RESULTS = 20;

const httpUrl = z.string().min(1);

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * `user:password@` in the URL: fetch refuses such a URL with an error quoting it whole, so every search
 * failed as "could not be reached" and the password went to the model, the run journal and the log.
 */
function hasUserinfo(text: string): boolean {
  try {
    const url = new URL(text);
    return url.username !== "" || url.password !== "";
  } catch {
    return false;
  }
}

/** `web_extract` (and the image download of `vision_analyze`). */
const webSchema = z
  .strictObject({
    /** Fetch private, link-local and loopback addresses too (a LAN wiki, a local test server). */
    allow_private: z.boolean().default(false),
    /** Bytes read from one response; the rest is not downloaded. */
    max_bytes: z
      .number()
      .int()
      .positive()
      .default(2 * 1024 * 1024),
    /** Characters of extracted text returned to the model. */
    max_chars: z.number().int().positive().default(20_000),
    timeout_seconds: timerSeconds(20),
  })
  .default({ allow_private: false, max_bytes: 2 * 1024 * 1024, max_chars: 20_000, timeout_seconds: 20 });

/** `web_search` is offered only when a backend is named here. */
const webSearchSchema = z
  .strictObject({
    backend: z.enum(["searxng", "brave", "tavily"]),
    /** SearXNG: the instance's base URL (required). Brave, Tavily: overrides the public API URL. */
    url: httpUrl.optional(),
    /** Brave: the X-Subscription-Token; Tavily: the API key (`tvly-...`). */
    api_key: z
      .string()
      .min(1)
      // An empty one is refused as any empty text is, and only so.
      .refine((key) => key === "" || key.trim() !== "", {
        message: "blank (spaces only) — write the backend's key",
      })
      .transform(withoutSurroundingSpaces)
      .optional(),
    max_results: z.number().int().min(1).max(MAX_SEARCH_RESULTS).default(5),
    timeout_seconds: timerSeconds(20),
  })
  .superRefine((search, ctx) => {
    if (search.backend === "searxng" && search.url === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message:
          'missing — backend "searxng" needs url: http://127.0.0.1:8080 (the instance, JSON format enabled)',
      });
    }
    if (search.backend !== "searxng" && search.api_key === undefined) {
      const variable = search.backend === "brave" ? "BRAVE_API_KEY" : "TAVILY_API_KEY";
      ctx.addIssue({
        code: "custom",
        path: ["api_key"],
        message: `missing — backend "${search.backend}" needs api_key: \${${variable}}`,
      });
    }
    // Sent in a header by brave and tavily: one fetch cannot send failed every search with its own error.
    const keyProblem =
      search.backend === "searxng" || search.api_key?.trim() === ""
        ? undefined
        : apiKeyHeaderProblem(search.api_key, "every search would fail before reaching the backend");
    if (keyProblem !== undefined) ctx.addIssue({ code: "custom", path: ["api_key"], message: keyProblem });
    // An unset `${VAR}` keeps its text, which reads as no URL at all: name the variable instead. An empty
    // one is refused as any empty text is, and only so.
    const unset = search.url === undefined ? undefined : unsetVariablesIn(search.url)[0];
    if (unset !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: `\${${unset}} is not set — set ${unset} (the ${search.backend === "searxng" ? "SearXNG instance's" : "API's"} http(s) URL) in the .env beside config.yaml or the environment`,
      });
    } else if (search.url !== undefined && search.url !== "" && !isHttpUrl(search.url)) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message: "not an http(s) URL — write it as https://host[:port][/path]",
      });
    } else if (search.url !== undefined && hasUserinfo(search.url)) {
      ctx.addIssue({
        code: "custom",
        path: ["url"],
        message:
          "holds a user name or password (user:password@) — remove it: svc cannot send credentials written in a URL; put the backend's key in api_key",
      });
    }
  })
  .optional();

const terminalSchema = z
  .strictObject({
    timeout_seconds: timerSeconds(60),
    /** Bytes kept of stdout and of stderr each; the rest is dropped (the command still runs to its end). */
    max_output_bytes: z
      .number()
      .int()
      .positive()
      .default(64 * 1024),
  })
  .default({ timeout_seconds: 60, max_output_bytes: 64 * 1024 });

const fileSchema = z
  .strictObject({
    /** Bytes `file_read` returns and `file_write` accepts. */
    max_bytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
  })
  .default({ max_bytes: 1024 * 1024 });

/**
 * Toolset names a route may list that svc has no built-in tool for: they are passed to a command agent
 * (in `SVC_TOOLSETS`) for it to honour, and offer a model run nothing.
 */
export const TOOLSETS_WITHOUT_TOOLS: readonly string[] = ["code_execution", "browser", "memory"];

/** Settings of the built-in agent toolsets (docs/agent-tools.md). */
export const toolsSchema = z
  .strictObject({
    web: webSchema,
    web_search: webSearchSchema,
    terminal: terminalSchema,
    file: fileSchema,
  })
  .default({
    web: { allow_private: false, max_bytes: 2 * 1024 * 1024, max_chars: 20_000, timeout_seconds: 20 },
    terminal: { timeout_seconds: 60, max_output_bytes: 64 * 1024 },
    file: { max_bytes: 1024 * 1024 },
  });
export type ToolsSettings = z.infer<typeof toolsSchema>;
export type WebSettings = ToolsSettings["web"];
export type WebSearchSettings = NonNullable<ToolsSettings["web_search"]>;
