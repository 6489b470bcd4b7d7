import { describe, expect, it } from "vitest";
import { readDeviceAnswer } from "../../../src/io/oauth/deviceAnswer.js";

const ENDPOINT = "https://as.example/oauth/device";

/** RFC 8628 section 3.2's example device authorization response. */
const RFC_EXAMPLE = {
  device_code: "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS",
  user_code: "WDJB-MJHT",
  verification_uri: "https://example.com/device",
  verification_uri_complete: "https://example.com/device?user_code=WDJB-MJHT",
  expires_in: 1800,
  interval: 5,
};

describe("readDeviceAnswer", () => {
  it("RFC 8628 3.2: the example response is read as it is", () => {
    expect(readDeviceAnswer(RFC_EXAMPLE, ENDPOINT)).toEqual({ fields: RFC_EXAMPLE });
  });

  it("reads Google's verification_url, Entra v1's numbers written as strings, and a relative verification_uri", () => {
    const { verification_uri: _, ...rest } = RFC_EXAMPLE;
    expect(
      readDeviceAnswer(
        { ...rest, verification_url: "/activate", expires_in: "900", interval: "3" },
        ENDPOINT,
      ),
    ).toEqual({
      fields: {
        ...rest,
        verification_url: "/activate",
        verification_uri: "https://as.example/activate",
        expires_in: 900,
        interval: 3,
      },
    });
  });

  it("an OPTIONAL verification_uri_complete svc cannot use is left out: the user opens verification_uri", () => {
    for (const complete of [3, "example.com/device?user_code=WDJB-MJHT", "ftp://files.example/x"]) {
      const read = readDeviceAnswer({ ...RFC_EXAMPLE, verification_uri_complete: complete }, ENDPOINT);
      expect(read).toEqual({ fields: (({ verification_uri_complete: _, ...rest }) => rest)(RFC_EXAMPLE) });
    }
  });

  it("an interval of 0 or less is read as absent (RFC 8628 3.2: 5 s)", () => {
    for (const interval of [0, -1, "0"])
      expect(readDeviceAnswer({ ...RFC_EXAMPLE, interval }, ENDPOINT)).toEqual({
        fields: (({ interval: _, ...rest }) => rest)(RFC_EXAMPLE),
      });
  });

  it("says what is missing or wrong in an answer svc cannot use", () => {
    const without = (name: keyof typeof RFC_EXAMPLE) => {
      const copy: Record<string, unknown> = { ...RFC_EXAMPLE };
      delete copy[name];
      return copy;
    };
    for (const [answer, problem] of [
      [[], "not a JSON object"],
      [without("device_code"), "no device_code"],
      [{ ...RFC_EXAMPLE, user_code: 7 }, "user_code is not a string"],
      [without("verification_uri"), "no verification_uri"],
      [
        { ...RFC_EXAMPLE, verification_uri: "javascript:alert(1)" },
        'verification_uri "javascript:alert(1)" is not an http(s) URL',
      ],
      [
        { ...RFC_EXAMPLE, verification_uri: "example.com/device" },
        'verification_uri "example.com/device" is a host without a scheme, not a URL',
      ],
      [without("expires_in"), "no expires_in"],
      [{ ...RFC_EXAMPLE, expires_in: -5 }, "expires_in is not a positive number of seconds"],
      [{ ...RFC_EXAMPLE, interval: "soon" }, "interval is not a number of seconds"],
    ] as const)
      expect(readDeviceAnswer(answer, ENDPOINT)).toEqual({ problem });
  });
});
