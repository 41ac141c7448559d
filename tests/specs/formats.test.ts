/**
 * `format` and the content keywords mean what the standard says (src/specs/formats.ts): each asserted format
 * is judged as its RFC says, the same for code-defined and run-time specs, and what cannot be judged exactly is
 * refused when the spec is defined, naming it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { SpecError } from "../../src/errors.js";
import { validateAgainstSpec } from "../../src/specs/check.js";
import { resolveSpec } from "../../src/specs/registry.js";
import { defineSpec, type JsonSchema } from "../../src/specs/spec.js";

const kinds = {
  code: (schema: JsonSchema) => defineSpec({ name: "formats", description: "", schema }),
  "run-time": (schema: JsonSchema) => resolveSpec({ name: "formats", schema }),
};
const S2020 = "https://json-schema.org/draft/2020-12/schema";

describe.each(Object.entries(kinds))("%s specs judge each format as its RFC says", (_kind, spec) => {
  // Values the official suite calls invalid that a looser format check approved (one or two per format).
  it.each([
    ["hostname", "xn--X", "invalid Punycode (an A-label must decode)"],
    ["hostname", "xn--hello-zed", "an A-label that begins with a nonspacing mark"],
    ["hostname", "example.", "a trailing dot"],
    ["uri", "http://example.com:abc/path", "a non-numeric port"],
    ["uri", "http:/[::1]", "square brackets in a path segment"],
    ["uri-reference", "//a@b@example.com/", "two at-signs in the authority"],
    ["date-time", "1985-04-12T23:20:50+01", "an offset without minutes"],
    ["date-time", "2016-12-31T24:59:60+01:00", "hour 24"],
    ["duration", "P1Y2D", "years and days without months"],
    ["uri-template", "a\u007fb", "a delete character"],
    ["uuid", "urn:uuid:2eb8aa08-aa98-11ea-b4aa-73b441d16380", "a URN prefix"],
    ["regex", "\\a", "\\a, no ECMA-262 escape"],
    ["idn-hostname", "\u302e\uc2e4\ub840.\ud14c\uc2a4\ud2b8", "a disallowed character (U+302E)"],
  ])("%s refuses %j (%s)", (format, value) => {
    expect(validateAgainstSpec(spec({ type: "string", format }), value).valid).toBe(false);
  });

  it.each([
    ["hostname", "xn--4gbwdl.xn--wgbh1c"],
    ["idn-hostname", "실례.테스트"],
    ["iri", "http://ƒøø.ßår/?∂éœ=πîx#πîüx"],
    ["time", "23:59:60Z"],
    ["time", "15:59:60-08:00"],
    ["email", "joe.bloggs@example.com"],
    ["uri", "urn:oasis:names:specification:docbook:dtd:xml:4.1.2"],
  ])("%s accepts %j", (format, value) => {
    expect(validateAgainstSpec(spec({ type: "string", format }), value).valid).toBe(true);
  });

  it("accepts a leap second only where it falls at 23:59:60 UTC", () => {
    expect(validateAgainstSpec(spec({ type: "string", format: "time" }), "22:59:60Z").valid).toBe(false);
    expect(validateAgainstSpec(spec({ type: "string", format: "time" }), "23:59:60+01:00").valid).toBe(false);
  });

  it("refuses idn-email at definition, naming the format and why", () => {
    expect(() => spec({ type: "object", properties: { to: { type: "string", format: "idn-email" } } })).toThrow(
      /"format": "idn-email" at #\/properties\/to is not supported: .*exponential time/,
    );
  });

  it("ignores a format the standard does not define, as an annotation, and lists it on the spec", () => {
    for (const format of ["url", "int32", "telephone"]) {
      const defined = spec({ type: "string", format });
      expect(defined.ignoredKeywords).toEqual([{ keyword: "format", at: "#", format }]);
      expect(validateAgainstSpec(defined, "anything").valid).toBe(true);
      expect(validateAgainstSpec(defined, 5).valid).toBe(false);
    }
  });
});

describe.each(Object.entries(kinds))("%s specs: content keywords follow each dialect", (_kind, spec) => {
  const base64 = (text: string) => Buffer.from(text).toString("base64");

  it("draft-07 asserts contentMediaType application/json and contentEncoding base64", () => {
    const json = spec({ contentMediaType: "application/json" });
    expect(validateAgainstSpec(json, '{"foo": "bar"}').valid).toBe(true);
    expect(validateAgainstSpec(json, "{:}").valid).toBe(false);
    const encoded = spec({ contentEncoding: "base64" });
    expect(validateAgainstSpec(encoded, base64("anything")).valid).toBe(true);
    expect(validateAgainstSpec(encoded, "eyJmb28iOi%iYmFyIn0K").valid).toBe(false);
    const both = spec({ contentMediaType: "application/json", contentEncoding: "base64" });
    expect(validateAgainstSpec(both, base64('{"foo": "bar"}')).valid).toBe(true);
    expect(validateAgainstSpec(both, base64("{:}")).valid).toBe(false);
    expect(validateAgainstSpec(both, "{}").valid).toBe(false);
  });

  it("says what is wrong with the content", () => {
    expect(validateAgainstSpec(spec({ type: "object", properties: { doc: { contentMediaType: "application/json" } } }), { doc: "{:}" }).errors).toEqual([
      'doc is "{:}"; it must be a JSON document (contentMediaType application/json)',
    ]);
  });

  it("draft-07 refuses other media types and encodings at definition, naming them", () => {
    expect(() => spec({ contentMediaType: "image/png" })).toThrow(/"contentMediaType": "image\/png" at # is not supported/);
    expect(() => spec({ contentEncoding: "quoted-printable" })).toThrow(/"contentEncoding": "quoted-printable" at # is not supported/);
  });

  it("2020-12 keeps them annotations, as the standard says", () => {
    const json = spec({ $schema: S2020, contentMediaType: "application/json", contentEncoding: "base64" });
    expect(validateAgainstSpec(json, "{:}").valid).toBe(true);
    expect(() => spec({ $schema: S2020, contentMediaType: "image/png" })).not.toThrow();
  });
});

describe("format validators stay quiet and total", () => {
  afterEach(() => vi.restoreAllMocks());

  it("judges an invalid internationalized host name without writing to the console", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const spec = kinds["run-time"]({ type: "string", format: "idn-hostname" });
    expect(validateAgainstSpec(spec, "xn--X").valid).toBe(false);
    expect(validateAgainstSpec(spec, "-bad-.example").valid).toBe(false);
    expect(log).not.toHaveBeenCalled();
  });

  it("reads a value its validator throws on as invalid, not as a crash", () => {
    // The e-mail validator throws on an address literal with an unregistered tag; the URI one on an IPvFuture host.
    const email = validateAgainstSpec(kinds.code({ type: "string", format: "email" }), "joe@[tag:stuff]");
    expect(email).toMatchObject({ valid: false, errors: ['the value is "joe@[tag:stuff]"; it must be a valid email'] });
    expect(validateAgainstSpec(kinds.code({ type: "string", format: "iri" }), "http://[V1.fe]").valid).toBe(false);
  });
});

describe("zod specs' formats keep working", () => {
  it.each([
    ["email", z.email(), "ada@example.com", "ada.example.com"],
    ["uuid", z.uuid(), "2eb8aa08-aa98-41ea-b4aa-73b441d16380", "2eb8aa08-aa98-41ea-b4aa"],
    ["url", z.url(), "https://example.com/a", "not a url"],
    ["iso datetime", z.iso.datetime(), "2024-01-02T03:04:05Z", "2024-13-02T03:04:05Z"],
    ["iso date", z.iso.date(), "2024-02-29", "2023-02-29"],
    ["iso duration", z.iso.duration(), "P1DT2H", "P1X"],
    ["ipv4", z.ipv4(), "192.168.0.1", "192.168.0.256"],
    ["ipv6", z.ipv6(), "::1", "::g"],
  ])("%s", (_label, schema, good, bad) => {
    const spec = defineSpec({ name: "zod-format", description: "", schema: z.object({ v: schema }) });
    expect(validateAgainstSpec(spec, { v: good }).valid).toBe(true);
    expect(validateAgainstSpec(spec, { v: bad }).valid).toBe(false);
  });

  it("a zod check whose JSON Schema form names no standard format keeps its pattern; the format itself is an annotation in a JSON Schema", () => {
    const spec = defineSpec({ name: "zod-format", description: "", schema: z.string().startsWith("a") });
    expect(spec.schema).not.toHaveProperty("format");
    expect(validateAgainstSpec(spec, "ab").valid).toBe(true);
    expect(validateAgainstSpec(spec, "ba").valid).toBe(false);
    const annotated = defineSpec({ name: "json-format", description: "", schema: { type: "string", format: "starts_with" } });
    expect(annotated.ignoredKeywords).toEqual([{ keyword: "format", at: "#", format: "starts_with" }]);
    expect(validateAgainstSpec(annotated, "ba").valid).toBe(true);
  });
});

describe("a host name's cost is bounded", () => {
  it("a value of a million characters is judged at once as not a host name (253 octets at most)", () => {
    for (const format of ["hostname", "idn-hostname"]) {
      const spec = resolveSpec({ name: "h", schema: { type: "object", properties: { h: { type: "string", format } } } });
      expect(validateAgainstSpec(spec, { h: `${"a.".repeat(500_000)}com` }).valid, format).toBe(false);
      expect(validateAgainstSpec(spec, { h: "example.com" }).valid, format).toBe(true);
    }
  });
});
