import { describe, expect, it } from "vitest";
import { imageDimensions } from "../../../src/agent/imageDimensions.js";
import { pixelsOf } from "../../../src/agent/imageLine.js";
import { pngHeader } from "../../helpers/pngHeader.js";

/** File headers as the formats write them (enough bytes to hold the size, not a whole image). */
const png = pngHeader;

function gif(width: number, height: number): Buffer {
  const head = Buffer.alloc(13);
  head.write("GIF89a", 0, "latin1");
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  return head;
}

/** A JPEG with an APP0 (JFIF) segment, an APP1 segment of `exif` bytes, then its SOF2 (progressive) frame. */
function jpeg(width: number, height: number, exif = 100): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, ...Buffer.from("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0]);
  const app1 = Buffer.alloc(exif + 4);
  app1.writeUInt16BE(0xffe1, 0);
  app1.writeUInt16BE(exif + 2, 2);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc2, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, app1, sof]);
}

function webp(chunk: "VP8 " | "VP8L" | "VP8X", width: number, height: number): Buffer {
  const head = Buffer.alloc(30);
  head.write("RIFF", 0, "latin1");
  head.write("WEBP", 8, "latin1");
  head.write(chunk, 12, "latin1");
  if (chunk === "VP8X") {
    head.writeUIntLE(width - 1, 24, 3);
    head.writeUIntLE(height - 1, 27, 3);
  } else if (chunk === "VP8 ") {
    Buffer.from([0x9d, 0x01, 0x2a]).copy(head, 23);
    head.writeUInt16LE(width, 26);
    head.writeUInt16LE(height, 28);
  } else {
    head[20] = 0x2f;
    head.writeUInt32LE((width - 1) | ((height - 1) << 14), 21);
  }
  return head;
}

describe("imageDimensions (the size a file header gives)", () => {
  it("reads PNG, GIF, JPEG (past its other segments) and the three WebP kinds", () => {
    expect(imageDimensions(png(1280, 9000))).toEqual({ width: 1280, height: 9000 });
    expect(imageDimensions(gif(640, 480))).toEqual({ width: 640, height: 480 });
    expect(imageDimensions(jpeg(8192, 600, 30_000))).toEqual({ width: 8192, height: 600 });
    expect(imageDimensions(webp("VP8 ", 1024, 768))).toEqual({ width: 1024, height: 768 });
    expect(imageDimensions(webp("VP8L", 9000, 16))).toEqual({ width: 9000, height: 16 });
    expect(imageDimensions(webp("VP8X", 16383, 12000))).toEqual({ width: 16383, height: 12000 });
  });

  it("is undefined for other data and for a header cut short", () => {
    expect(imageDimensions(Buffer.from("<svg xmlns='http://www.w3.org/2000/svg'/>"))).toBeUndefined();
    expect(imageDimensions(png(10, 10).subarray(0, 20))).toBeUndefined();
    expect(imageDimensions(jpeg(10, 10).subarray(0, 30))).toBeUndefined();
    expect(imageDimensions(Buffer.alloc(0))).toBeUndefined();
  });
});

describe("pixelsOf (an image's base64, as a tool gives it)", () => {
  it("reads a header at the start, and a JPEG's frame after a large EXIF segment", () => {
    expect(pixelsOf(png(1280, 9000).toString("base64"))).toEqual({ width: 1280, height: 9000 });
    expect(pixelsOf(jpeg(9000, 10, 60_000).toString("base64"))).toEqual({ width: 9000, height: 10 });
    expect(pixelsOf(Buffer.from("not an image at all").toString("base64"))).toBeUndefined();
  });
});
