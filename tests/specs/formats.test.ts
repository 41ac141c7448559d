/**
 * `format` and the content keywords mean what the standard says (src/specs/formats.ts): each asserted format
 * is judged as its RFC says, the same for code-defined and run-time specs, and what cannot be judged exactly is
 * refused when the spec is defined, naming it.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { domainToASCII } from "node:url";
import { SpecError } from "../../src/errors.js";
import { checkValueSync } from "../../src/specs/check.js";
import { idnaProperty, type IdnaProperty } from "../../src/specs/idna.js";
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
    expect(checkValueSync(spec({ type: "string", format }), value).valid).toBe(false);
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
    expect(checkValueSync(spec({ type: "string", format }), value).valid).toBe(true);
  });

  it("accepts a leap second only where it falls at 23:59:60 UTC", () => {
    expect(checkValueSync(spec({ type: "string", format: "time" }), "22:59:60Z").valid).toBe(false);
    expect(checkValueSync(spec({ type: "string", format: "time" }), "23:59:60+01:00").valid).toBe(false);
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
      expect(checkValueSync(defined, "anything").valid).toBe(true);
      expect(checkValueSync(defined, 5).valid).toBe(false);
    }
  });
});

describe.each(Object.entries(kinds))("%s specs: content keywords follow each dialect", (_kind, spec) => {
  const base64 = (text: string) => Buffer.from(text).toString("base64");

  it("draft-07 asserts contentMediaType application/json and contentEncoding base64", () => {
    const json = spec({ contentMediaType: "application/json" });
    expect(checkValueSync(json, '{"foo": "bar"}').valid).toBe(true);
    expect(checkValueSync(json, "{:}").valid).toBe(false);
    const encoded = spec({ contentEncoding: "base64" });
    expect(checkValueSync(encoded, base64("anything")).valid).toBe(true);
    expect(checkValueSync(encoded, "eyJmb28iOi%iYmFyIn0K").valid).toBe(false);
    const both = spec({ contentMediaType: "application/json", contentEncoding: "base64" });
    expect(checkValueSync(both, base64('{"foo": "bar"}')).valid).toBe(true);
    expect(checkValueSync(both, base64("{:}")).valid).toBe(false);
    expect(checkValueSync(both, "{}").valid).toBe(false);
  });

  it("says what is wrong with the content", () => {
    expect(checkValueSync(spec({ type: "object", properties: { doc: { contentMediaType: "application/json" } } }), { doc: "{:}" }).errors).toEqual([
      'doc is "{:}"; it must be a JSON document (contentMediaType application/json)',
    ]);
  });

  it("draft-07 refuses other media types and encodings at definition, naming them", () => {
    expect(() => spec({ contentMediaType: "image/png" })).toThrow(/"contentMediaType": "image\/png" at # is not supported/);
    expect(() => spec({ contentEncoding: "quoted-printable" })).toThrow(/"contentEncoding": "quoted-printable" at # is not supported/);
  });

  it("2020-12 keeps them annotations, as the standard says", () => {
    const json = spec({ $schema: S2020, contentMediaType: "application/json", contentEncoding: "base64" });
    expect(checkValueSync(json, "{:}").valid).toBe(true);
    expect(() => spec({ $schema: S2020, contentMediaType: "image/png" })).not.toThrow();
  });
});

describe("format validators stay quiet and total", () => {
  afterEach(() => vi.restoreAllMocks());

  it("judges an invalid internationalized host name without writing to the console", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const spec = kinds["run-time"]({ type: "string", format: "idn-hostname" });
    expect(checkValueSync(spec, "xn--X").valid).toBe(false);
    expect(checkValueSync(spec, "-bad-.example").valid).toBe(false);
    expect(log).not.toHaveBeenCalled();
  });

  it("reads a value its validator throws on as invalid, not as a crash", () => {
    // The e-mail validator throws on an address literal with an unregistered tag; the URI one on an IPvFuture host.
    const email = checkValueSync(kinds.code({ type: "string", format: "email" }), "joe@[tag:stuff]");
    expect(email).toMatchObject({ valid: false, errors: ['the value is "joe@[tag:stuff]"; it must be a valid email'] });
    expect(checkValueSync(kinds.code({ type: "string", format: "iri" }), "http://[V1.fe]").valid).toBe(false);
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
    expect(checkValueSync(spec, { v: good }).valid).toBe(true);
    expect(checkValueSync(spec, { v: bad }).valid).toBe(false);
  });

  it("a zod check whose JSON Schema form names no standard format keeps its pattern; the format itself is an annotation in a JSON Schema", () => {
    const spec = defineSpec({ name: "zod-format", description: "", schema: z.string().startsWith("a") });
    expect(spec.schema).not.toHaveProperty("format");
    expect(checkValueSync(spec, "ab").valid).toBe(true);
    expect(checkValueSync(spec, "ba").valid).toBe(false);
    const annotated = defineSpec({ name: "json-format", description: "", schema: { type: "string", format: "starts_with" } });
    expect(annotated.ignoredKeywords).toEqual([{ keyword: "format", at: "#", format: "starts_with" }]);
    expect(checkValueSync(annotated, "ba").valid).toBe(true);
  });
});

describe.each(Object.entries(kinds))("%s specs: idn-hostname is IDNA2008 as written (RFC 5890-5893), code point by code point", (_kind, spec) => {
  const idn = spec({ type: "string", format: "idn-hostname" });
  const hostname = spec({ type: "string", format: "hostname" });
  const valid = (value: string) => checkValueSync(idn, value).valid;

  // Each with the A-label of its first label: the Punycode (RFC 3492) of its code points as written, which
  // decodes to them again (upper-case ASCII in an A-label is the same label in lower case: not listed there).
  it.each([
    ["a\u200Bb.com", "ZERO WIDTH SPACE (looks like ab.com)", "xn--ab-g1t"],
    ["a\u00ADb.com", "SOFT HYPHEN", "xn--ab-5da"],
    ["a\uFEFFb.com", "ZERO WIDTH NO-BREAK SPACE", "xn--ab-ot3n"],
    ["a\u2060b.com", "WORD JOINER", "xn--ab-q8t"],
    ["a\u034Fb.com", "COMBINING GRAPHEME JOINER", "xn--ab-x0b"],
    ["\u00C4.com", "upper case Ä (IDNA2008 has ä)", "xn--7ba"],
    ["\u0130.com", "İ, upper case with a dot", "xn--bfa"],
    ["\u210C.com", "ℌ, a letterlike symbol NFKC maps to h", "xn--c2g"],
    ["\uFB01.com", "ﬁ, a ligature NFKC maps to fi", "xn--jm6c"],
    ["\uFF41.com", "ａ, a fullwidth letter", "xn--mi7c"],
    ["\u1E0B\u0323.com", "a U-label not in NFC (ḋ then a dot below: NFC writes ḍ then a dot above)", "xn--kta988k"],
    ["a\u0308.com", "a decomposed ä (not NFC)", "xn--a-ccb"],
    ["Ab\u00E4.com", "an upper-case ASCII letter inside a U-label", undefined],
    ["\u1100\u1161.kr", "old Hangul jamo", "xn--ypd8q"],
    ["\u13F8.com", "a Cherokee small letter (case folding changes it)", "xn--oce"],
    ["ab\u0378.com", "an unassigned code point", "xn--ab-h4b"],
  ])("refuses %j (%s), and its A-label", (value, _what, aLabel) => {
    expect(valid(value)).toBe(false);
    if (aLabel !== undefined) expect(valid(`${aLabel}.com`)).toBe(false);
  });

  it.each([
    ["ä.com"],
    ["münchen.de"],
    ["пример.рф"],
    ["παράδειγμα.δοκιμή"],
    ["例え.テスト"],
    ["उदाहरण.परीक्षा"],
    ["مثال.إختبار"],
    ["בדיקה.קום"],
    ["ตัวอย่าง.ไทย"],
    ["실례.테스트"],
    ["ßς.gr"],
    ["Example.COM"],
    ["a.א"],
  ])("accepts %j, and its A-label form", (value) => {
    expect(valid(value)).toBe(true);
    const aLabels = domainToASCII(value); // Node's own Punycode: the two encoders agree
    expect(aLabels).not.toBe("");
    expect(valid(aLabels)).toBe(true);
    expect(checkValueSync(hostname, aLabels).valid).toBe(true);
  });

  it("CONTEXTJ: a ZERO WIDTH JOINER only after a virama, of any script (the virama class read from Node's Unicode data)", () => {
    for (const virama of ["\u094D", "\u09CD", "\u0BCD", "\u0D4D", "\u0E3A", "\u1039", "\uA8C4", "\u{11F41}"]) {
      const base = { "\u094D": "क", "\u09CD": "ক", "\u0BCD": "க", "\u0D4D": "ന", "\u0E3A": "ก", "\u1039": "က", "\uA8C4": "ꢒ", "\u{11F41}": "\u{11F12}" }[
        virama
      ]!;
      expect(valid(`${base}${virama}\u200D${base}`), `ZWJ after U+${virama.codePointAt(0)!.toString(16)}`).toBe(true);
      expect(valid(`${base}${virama}\u200C${base}`), `ZWNJ after U+${virama.codePointAt(0)!.toString(16)}`).toBe(true);
    }
    expect(valid("क\u200Dष")).toBe(false); // no virama before
    expect(valid("\u200Dष")).toBe(false); // nothing before
    expect(valid("क\u093F\u200Dष")).toBe(false); // a vowel sign (a mark, not a virama)
    expect(valid("a\u200Db")).toBe(false);
  });

  it("CONTEXTJ: a ZERO WIDTH NON-JOINER after a virama, or between joining letters (Joining_Type L/D, transparent marks, R/D)", () => {
    expect(valid("بي\u200Cبي")).toBe(true); // dual-joining on both sides
    expect(valid("ب\u064E\u200C\u064Eب")).toBe(true); // fathas (transparent) between
    expect(valid("ا\u200Cب")).toBe(false); // ALEF is right-joining: it cannot join what follows
    expect(valid("ب\u200Cء")).toBe(false); // HAMZA does not join
    expect(valid("ب\u200C")).toBe(false);
    expect(valid("ب\u200C\u200Cب")).toBe(false); // a ZWNJ is not transparent to another
    expect(valid("a\u200Cb")).toBe(false);
  });

  it("CONTEXTO: the middle dot, keraia, geresh, gershayim, katakana middle dot and Arabic-Indic digits in their contexts only", () => {
    expect(valid("l\u00B7l")).toBe(true);
    expect(valid("a\u00B7l")).toBe(false);
    expect(valid("l\u00B7")).toBe(false);
    expect(valid("\u03B1\u0375\u03B2")).toBe(true);
    expect(valid("\u03B1\u0375s")).toBe(false);
    expect(valid("\u05D0\u05F3\u05D1")).toBe(true);
    expect(valid("\u05D0\u05F4\u05D1")).toBe(true);
    expect(valid("a\u05F3\u05D1")).toBe(false);
    expect(valid("\u30FB\u30A2")).toBe(true);
    expect(valid("\u30FB\u4E08")).toBe(true);
    expect(valid("def\u30FBabc")).toBe(false);
    expect(valid("\u30FB")).toBe(false);
    expect(valid("\u0628\u0660\u0628")).toBe(true);
    expect(valid("\u06F0\u06F1")).toBe(true);
    expect(valid("\u0628\u0660\u06F0")).toBe(false);
  });

  it("the Bidi rule holds for every label of a name with a right-to-left label (RFC 5893)", () => {
    expect(valid("0a.\u05D0")).toBe(false); // a label starting with a digit
    expect(valid("a\u05D0")).toBe(false); // a left-to-right label holding a right-to-left letter
    expect(valid("\u05D0a")).toBe(false);
    expect(valid("\u05D01")).toBe(true); // ends with a European digit
    expect(valid("\u05D0-")).toBe(false);
    expect(valid("\u05D01\u0660")).toBe(false); // European and Arabic-Indic digits together
    expect(valid("0a.example")).toBe(true); // no right-to-left label: the rule does not apply
  });

  it("refuses a name holding a letter newer than the Bidi table it can be judged with (Unicode 16's Tulu-Tigalari), rather than guess", () => {
    expect(idnaProperty(0x11380)).toBe("PVALID");
    expect(valid("\u{11380}")).toBe(false);
  });
});

describe("RFC 5892's derived property, computed from Node's Unicode data, agrees with IANA's published table", () => {
  // IANA, "IDNA Rules and Derived Property Values" (idna-tables-12.0.0, the latest IANA registry; these code
  // points have kept their values through Unicode 17.0), one row per code point.
  const IANA: Array<[number, IdnaProperty]> = [
    [0x002c, "DISALLOWED"],
    [0x002d, "PVALID"],
    [0x0030, "PVALID"],
    [0x0041, "DISALLOWED"],
    [0x005f, "DISALLOWED"],
    [0x0061, "PVALID"],
    [0x007a, "PVALID"],
    [0x00a0, "DISALLOWED"],
    [0x00aa, "DISALLOWED"],
    [0x00ad, "DISALLOWED"],
    [0x00b7, "CONTEXTO"],
    [0x00c4, "DISALLOWED"],
    [0x00df, "PVALID"],
    [0x00e4, "PVALID"],
    [0x00f7, "DISALLOWED"],
    [0x0100, "DISALLOWED"],
    [0x0101, "PVALID"],
    [0x0130, "DISALLOWED"],
    [0x0131, "PVALID"],
    [0x0300, "PVALID"],
    [0x0340, "DISALLOWED"],
    [0x0345, "DISALLOWED"],
    [0x034f, "DISALLOWED"],
    [0x0375, "CONTEXTO"],
    [0x0378, "UNASSIGNED"],
    [0x03c2, "PVALID"],
    [0x05d0, "PVALID"],
    [0x05f3, "CONTEXTO"],
    [0x0627, "PVALID"],
    [0x0640, "DISALLOWED"],
    [0x0660, "CONTEXTO"],
    [0x06f0, "CONTEXTO"],
    [0x06fd, "PVALID"],
    [0x07fa, "DISALLOWED"],
    [0x094d, "PVALID"],
    [0x0e33, "DISALLOWED"],
    [0x0f0b, "PVALID"],
    [0x1100, "DISALLOWED"],
    [0x13a0, "PVALID"],
    [0x13f8, "DISALLOWED"],
    [0x1e9e, "DISALLOWED"],
    [0x200b, "DISALLOWED"],
    [0x200c, "CONTEXTJ"],
    [0x200d, "CONTEXTJ"],
    [0x2060, "DISALLOWED"],
    [0x20d0, "DISALLOWED"],
    [0x210c, "DISALLOWED"],
    [0x3007, "PVALID"],
    [0x302e, "DISALLOWED"],
    [0x3031, "DISALLOWED"],
    [0x303b, "DISALLOWED"],
    [0x30fb, "CONTEXTO"],
    [0x3042, "PVALID"],
    [0x30a2, "PVALID"],
    [0x4e00, "PVALID"],
    [0xab70, "DISALLOWED"],
    [0xac00, "PVALID"],
    [0xd800, "DISALLOWED"],
    [0xe000, "DISALLOWED"],
    [0xfb01, "DISALLOWED"],
    [0xfeff, "DISALLOWED"],
    [0xff21, "DISALLOWED"],
    [0xff41, "DISALLOWED"],
    [0xfffe, "DISALLOWED"],
    [0x1d100, "DISALLOWED"],
    [0x1f600, "DISALLOWED"],
    [0x50000, "UNASSIGNED"],
    [0xe0001, "DISALLOWED"],
    [0x10ffff, "DISALLOWED"],
  ];

  it.each(IANA.map(([cp, value]) => [`U+${cp.toString(16).toUpperCase().padStart(4, "0")}`, cp, value] as const))("%s is %s", (_name, cp, value) => {
    expect(idnaProperty(cp)).toBe(value);
  });
});

describe("a host name's cost is bounded", () => {
  it("a value of a million characters is judged at once as not a host name (253 octets at most)", () => {
    for (const format of ["hostname", "idn-hostname"]) {
      const spec = resolveSpec({ name: "h", schema: { type: "object", properties: { h: { type: "string", format } } } });
      expect(checkValueSync(spec, { h: `${"a.".repeat(500_000)}com` }).valid, format).toBe(false);
      expect(checkValueSync(spec, { h: "example.com" }).valid, format).toBe(true);
    }
  });
});
