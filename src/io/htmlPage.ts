import { cutText } from "./cutText.js";

/**
 * An error body that is an HTML page (a proxy's or CDN's 502, a login page) named by its title and size,
 * since its markup tells the reader nothing; undefined for any other body.
 */
export function htmlPageSummary(body: string): string | undefined {
  if (!/<(!doctype html|html|head|body)\b/i.test(body)) return undefined;
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(body)?.[1]?.replace(/\s+/g, " ").trim();
  return `an HTML page${title ? ` "${cutText(title, 120)}"` : ""} (${body.length} characters, not shown)`;
}
