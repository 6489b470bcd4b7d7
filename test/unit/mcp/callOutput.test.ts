import { describe, expect, it } from "vitest";
import { formatResult } from "../../../src/cli/mcp.js";

const png = Buffer.alloc(1500, 7).toString("base64");

describe("svc mcp call output", () => {
  it("prints text as is and media or resources as one short line, never their base64", () => {
    const out = formatResult({
      content: [
        { type: "text", text: "Here it is:" },
        { type: "image", mimeType: "image/png", data: png },
        { type: "audio", mimeType: "audio/wav", data: "AAAA" },
        { type: "resource_link", uri: "demo://r/1", name: "First" },
        { type: "resource", resource: { uri: "demo://r/2", text: "embedded text" } },
        { type: "resource", resource: { uri: "demo://r/3", mimeType: "application/zip", blob: "AAAA" } },
      ],
    });
    expect(out).toBe(
      [
        "Here it is:",
        "[image image/png, 1500 bytes — --json prints the data]",
        "[audio audio/wav, 3 bytes — --json prints the data]",
        "[resource link: demo://r/1 (First)]",
        "embedded text",
        "[resource demo://r/3 application/zip, 3 bytes — --json prints the data]",
        "",
      ].join("\n"),
    );
    expect(out).not.toContain(png.slice(0, 40));
  });

  it("keeps each line svc writes for a media block or resource one line, the server's uri, name and type escaped; text keeps its lines, its hidden characters escaped too", () => {
    const out = formatResult({
      content: [
        {
          type: "resource_link",
          uri: "demo://r/\u202e1",
          name: "First\n[image image/png, 1 bytes]\u001b[2J",
        },
        { type: "image", mimeType: "image/png\u2066x", data: "AAAA" },
        { type: "resource", resource: { uri: "demo://r/\u200b3", blob: "AAAA" } },
        { type: "text", text: "as the server wrote it \u202e\n" },
      ],
    });
    expect(out).toBe(
      [
        "[resource link: demo://r/\\u202e1 (First\\n[image image/png, 1 bytes]\\u001b[2J)]",
        "[image image/png\\u2066x, 3 bytes — --json prints the data]",
        "[resource demo://r/\\u200b3, 3 bytes — --json prints the data]",
        "as the server wrote it \\u202e\n",
        "",
      ].join("\n"),
    );
  });

  it("prints structured content when there are no content blocks", () => {
    expect(formatResult({ content: [], structuredContent: { temperature: 21 } })).toBe(
      '{\n  "temperature": 21\n}\n',
    );
  });

  it("prints structured content when the content blocks hold only blank text (an empty text block beside it)", () => {
    expect(
      formatResult({ content: [{ type: "text", text: "" }], structuredContent: { temperature: 21 } }),
    ).toBe('{\n  "temperature": 21\n}\n');
    expect(formatResult({ content: [{ type: "text", text: "21 °C" }], structuredContent: { t: 21 } })).toBe(
      "21 °C\n",
    );
  });
});
