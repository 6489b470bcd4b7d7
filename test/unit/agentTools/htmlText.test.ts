import { describe, expect, it } from "vitest";
import { decodeEntities, htmlToText } from "../../../src/agent/tools/web/htmlText.js";

describe("htmlToText: readable text of a page for web_extract", () => {
  it("keeps the title and body text, drops scripts, styles, comments and markup", () => {
    const page = `<!doctype html><html><head><title>The  &amp; Page</title>
      <style>body { color: red }</style><script>var secret = "x";</script></head>
      <body><h1>Heading</h1><!-- a comment --><p>First <b>bold</b>&nbsp;para&#8230;</p>
      <script type="module">alert(1)</script><ul><li>one</li><li>two</li></ul>
      <noscript>enable js</noscript><p>a &lt; b &#x263A;</p></body></html>`;
    const { title, text } = htmlToText(page);
    expect(title).toBe("The & Page");
    expect(text).toBe("Heading\n\nFirst bold para…\n\none\n\ntwo\n\na < b ☺");
    expect(text).not.toMatch(/secret|alert|color|comment|enable js|The &/);
  });

  it("reads the body of a page whose head has no end tag (HTML lets it be left out)", () => {
    const page = `<!doctype html><html lang=en><head><meta charset=utf-8><title>Notes</title>
      <link rel=stylesheet href=a.css><script>track()</script><body><p>First<p>Second</body>`;
    expect(htmlToText(page)).toEqual({ title: "Notes", text: "First\nSecond" });
    expect(htmlToText("<head><title>T</title><p>no body tag either").text).toBe("no body tag either");
  });

  it("ends a tag at its own >, not at one inside a quoted attribute value", () => {
    const page = `<body><a href="/x" title="a > b">link</a> <button onclick="if (a>b) go()">Go</button>
      <div x-on:click='open = () => !open' data-n = "1>0">menu</div><img alt="2 > 1" src=x>after</body>`;
    expect(htmlToText(page).text).toBe("link Go\n\nmenu\nafter");
    // A quote that is not right after "=" opens no value; an unterminated value ends the document.
    expect(htmlToText(`<p class=it's>kept</p>`).text).toBe("kept");
    expect(htmlToText(`<p>kept</p><a title="never closed>lost`).text).toBe("kept");
    expect(htmlToText(`<a x="${'<a x="'.repeat(200_000)}`).text).toBe("");
  });

  it("takes no icon's <svg><title> for the page's title", () => {
    const icon = `<svg viewBox="0 0 8 8"><title>Close</title><path d="M0 0"/></svg>`;
    expect(htmlToText(`<body><p>Docs</p>${icon}</body>`)).toEqual({ title: "", text: "Docs" });
    expect(htmlToText(`<head><title>Page</title></head><body>${icon}</body>`).title).toBe("Page");
    expect(htmlToText(`<titlebar>x</titlebar><title>Real</title>`).title).toBe("Real");
  });

  it("ends cleanly on unterminated scripts, comments and tags", () => {
    expect(htmlToText("<p>kept</p><script>never closed").text).toBe("kept");
    expect(htmlToText("<p>kept</p><!-- never closed").text).toBe("kept");
    expect(htmlToText("a < b and <p unterminated").text).toBe("a < b and");
  });

  it("handles hostile input (a megabyte of unclosed script tags) in one pass", () => {
    const hostile = `${"<script".repeat(150_000)}<p>x`;
    expect(htmlToText(hostile).text).toBe("");
    expect(htmlToText("<a ".repeat(300_000)).text).toBe("");
  });

  it("reads a page of lone '<' (2 MiB of them, or of 'a < b') in one pass, each kept as text", () => {
    // Each lone "<" was searched to the document's end for its ">": quadratic, hours of blocked event loop.
    const lessThans = "<".repeat(2 * 1024 * 1024);
    expect(htmlToText(lessThans).text === lessThans).toBe(true);
    const comparisons = "a < b ".repeat(350_000);
    expect(htmlToText(comparisons).text === comparisons.trim()).toBe(true);
    expect(htmlToText("1 < 2 <p>three</p> 4 </ 5").text).toBe("1 < 2\nthree\n4 </ 5");
  });

  it("decodes numeric and named entities, leaves unknown ones", () => {
    expect(decodeEntities("&#65;&#x42;&quot;&bogus;&#0;")).toBe('AB"&bogus;�');
    // HTML 4's names, case-sensitive as in HTML; HTML5's upper-case forms of the common ones.
    expect(
      decodeEntities("caf&eacute; &Eacute;t&eacute; &times; &rarr; &hearts; &trade; &euro; &szlig;"),
    ).toBe("café Été × → ♥ ™ € ß");
    expect(decodeEntities("&AMP; &LT;b&GT; &Amp; &EACUTE;")).toBe("& <b> &Amp; &EACUTE;");
  });
});
