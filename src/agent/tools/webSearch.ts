import type { WebSearchSettings } from "../../config/sections/tools.js";
import { scrub } from "../../io/credentials.js";
import { fetchJson } from "../../io/web/fetchJson.js";
import { argsObject, stringArg, textOutcome, toolError } from "./outcome.js";
import type { AgentTool } from "./tool.js";
import { failureHint, noResultsNote, parseHits, searchRequest } from "./webSearch/backends.js";

/** `web_search`: titles, URLs and snippets from the configured backend (docs/agent-tools.md). */
export function webSearchTool(settings: WebSearchSettings): AgentTool {
  return {
    name: "web_search",
    description:
      "Search the web. Returns a numbered list of results (title, URL, snippet); read a page with web_extract.",
    inputSchema: {
      type: "object",
      properties: {
        query: { type: "string", description: "What to search for" },
        max_results: {
          type: "integer",
          minimum: 1,
          maximum: settings.max_results,
          description: `How many results (default and most: ${settings.max_results})`,
        },
      },
      required: ["query"],
      additionalProperties: false,
    },
    async execute(args, context) {
      const object = argsObject(args);
      if (typeof object === "string") return toolError(object);
      const query = stringArg(object, "query");
      if (typeof query !== "string") return toolError(query.error);
      const wanted = object.max_results;
      const count =
        typeof wanted === "number" && Number.isInteger(wanted) && wanted >= 1
          ? Math.min(wanted, settings.max_results)
          : settings.max_results;
      const answer = await fetchJson(
        searchRequest(settings, query, count),
        settings.timeout_seconds * 1000,
        context.signal,
      );
      // The backend's messages are shown to the model: never with the key in them.
      if (!answer.ok) {
        const why = `${scrub(answer.error, [settings.api_key])}${failureHint(settings.backend, answer.status, answer.waitSeconds)}`;
        return toolError(`web_search (${settings.backend}): ${why}`);
      }
      const hits = parseHits(settings.backend, answer.json);
      if (hits === undefined) return toolError(`web_search (${settings.backend}): unexpected answer shape`);
      if (hits.length === 0)
        return textOutcome(`No results for: ${query}${noResultsNote(settings.backend, answer.json)}`);
      // Each part on its one line: a title holding a line break (`a\n2. fake`) would fake an entry of the list.
      const lines = hits.slice(0, count).map((hit, i) => {
        const url = oneLine(hit.url);
        const snippet = oneLine(hit.snippet ?? "");
        return `${i + 1}. ${oneLine(hit.title ?? "") || url}\n   ${url}${snippet ? `\n   ${snippet}` : ""}`;
      });
      // A backend that quotes the key in a result (an echo page, a debugging answer) shows it to no model.
      return textOutcome(scrub(lines.join("\n"), [settings.api_key]));
    },
  };
}

/** A search result's text on one line: its line breaks and runs of spaces as one space. */
const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim();
