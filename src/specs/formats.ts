/**
 * What `format` and the content keywords mean. This package asserts `format`
 * (2020-12 makes it an annotation by default; a trust layer checks it), so
 * each format is judged as the RFC the standard names for it says, by
 * validators written to those RFCs (@hyperjump/json-schema-formats, and
 * src/specs/idna.ts for IDNA2008 host names), measured on the official suite's
 * optional format tests (tests/specs/official-suite.test.ts). A format the
 * standard defines but no validator here judges exactly and in bounded time
 * is refused when the spec is defined, naming it; a format the standard does
 * not define (`int32`, `color`, `utc-millisec`) is an annotation, as the
 * standard says of unknown formats: ignored, and listed on the spec with the
 * unknown keywords.
 *
 * Draft-07 lets a validator assert `contentEncoding` and `contentMediaType`,
 * and this package does for the values it can judge exactly ("base64",
 * "application/json"), refusing other values; 2019-09 and 2020-12 make them
 * annotations only, and so they stay there.
 */
import type { Ajv } from "ajv";
import * as rfc from "@hyperjump/json-schema-formats";
import { SpecError } from "../errors.js";
import type { Dialect } from "./dialect.js";
import { isIdnHostname } from "./idna.js";
import type { IgnoredKeyword } from "./keywords.js";
import { subschemas } from "./limits.js";

/** Formats of the standard refused at definition, and why. */
const REFUSED_FORMATS: Record<string, string> = {
  "idn-email": 'the validator available for it can take exponential time on some strings (an answer could stall the process); use "email", or a "pattern"',
};

const MAX_HOSTNAME_CHARS = 1_000;

/** An IDNA2008 host name (RFC 5890-5893), written in its IDNA2008 form (src/specs/idna.ts). */
function isIdn(hostname: string): boolean {
  // A host name is at most 253 octets in its ASCII form, which no name of over 1,000 characters has: it is
  // refused before its labels are read.
  return hostname.length <= MAX_HOSTNAME_CHARS && isIdnHostname(hostname);
}

/**
 * RFC 3339's full-time. @hyperjump refuses every leap second in a time without
 * a date; RFC 3339 allows second 60 where the time, moved to UTC, is 23:59:60.
 */
function isTime(time: string): boolean {
  if (rfc.isTime(time)) return true;
  const leap = /^(\d\d):(\d\d):60(?:\.\d+)?(?:[zZ]|([+-])(\d\d):(\d\d))$/.exec(time);
  if (leap === null || !rfc.isTime(`${time.slice(0, 6)}59${time.slice(8)}`)) return false;
  const [, hour, minute, sign, offsetHour, offsetMinute] = leap;
  const offset = sign === undefined ? 0 : (sign === "+" ? 1 : -1) * (Number(offsetHour) * 60 + Number(offsetMinute));
  return (((Number(hour) * 60 + Number(minute) - offset) % 1440) + 1440) % 1440 === 23 * 60 + 59;
}

/** Every format the standard defines that is asserted here, with its validator. */
const FORMATS: Record<string, (value: string) => boolean> = {
  date: rfc.isDate,
  time: isTime,
  "date-time": rfc.isDateTime,
  duration: rfc.isDuration,
  email: rfc.isEmail,
  hostname: (value) => rfc.isHostname(value) && isIdn(value),
  "idn-hostname": isIdn,
  ipv4: rfc.isIPv4,
  ipv6: rfc.isIPv6,
  uri: rfc.isUri,
  "uri-reference": rfc.isUriReference,
  iri: rfc.isIri,
  "iri-reference": rfc.isIriReference,
  uuid: rfc.isUuid,
  "uri-template": rfc.isUriTemplate,
  "json-pointer": rfc.isJsonPointer,
  "relative-json-pointer": rfc.isRelativeJsonPointer,
  regex: rfc.isRegex,
};

/** The formats a spec may use. */
export const ASSERTED_FORMATS: readonly string[] = Object.freeze(Object.keys(FORMATS));

/**
 * A validator that throws has not said "valid": the value is invalid. (The
 * URI validators throw on an IPvFuture host; the e-mail one on an address
 * literal with an unregistered tag.)
 */
const invalidOnThrow = (validate: (value: string) => boolean) => (value: string) => {
  try {
    return validate(value) === true;
  } catch {
    return false;
  }
};

/** Every `format` of a schema the standard does not define, with where it is: annotations, which validation ignores. */
export function unknownFormatsOf(schema: Record<string, unknown>): IgnoredKeyword[] {
  const found: IgnoredKeyword[] = [];
  for (const { schema: s, path } of subschemas(schema)) {
    const format = Object.hasOwn(s, "format") ? s.format : undefined;
    if (typeof format === "string" && !Object.hasOwn(FORMATS, format) && !Object.hasOwn(REFUSED_FORMATS, format))
      found.push({ keyword: "format", at: path, format });
  }
  return found;
}

/** Register the standard's formats, and in draft-07 the asserted content keywords, on a fresh ajv instance. */
export function addStandardFormats(ajv: Ajv, dialect: Dialect): void {
  for (const [name, validate] of Object.entries(FORMATS)) ajv.addFormat(name, { type: "string", validate: invalidOnThrow(validate) });
  if (dialect === "draft-07") addContentKeywords(ajv);
}

/** Refuse a spec that uses a format or content value this package cannot judge exactly, naming it and where it is. */
export function refuseUnjudgedFormats(schema: Record<string, unknown>, dialect: Dialect): void {
  for (const { schema: s, path } of subschemas(schema)) {
    const own = (key: string) => (Object.hasOwn(s, key) ? s[key] : undefined);
    const format = own("format");
    if (typeof format === "string" && Object.hasOwn(REFUSED_FORMATS, format)) {
      throw new SpecError(`"format": ${JSON.stringify(format)} at ${path.slice(0, 200)} is not supported: ${REFUSED_FORMATS[format]}.`);
    }
    if (dialect !== "draft-07") continue;
    const encoding = own("contentEncoding");
    if (encoding !== undefined && encoding !== "base64") {
      throw new SpecError(
        `"contentEncoding": ${JSON.stringify(encoding)?.slice(0, 60)} at ${path.slice(0, 200)} is not supported: draft-07 asserts it, and only "base64" is judged here. Remove it, or use a "pattern".`,
      );
    }
    const mediaType = own("contentMediaType");
    if (mediaType !== undefined && mediaType !== "application/json") {
      throw new SpecError(
        `"contentMediaType": ${JSON.stringify(mediaType)?.slice(0, 60)} at ${path.slice(0, 200)} is not supported: draft-07 asserts it, and only "application/json" is judged here. Remove it, or declare the dialect 2020-12, where it is an annotation.`,
      );
    }
  }
}

/** RFC 4648's base64 alphabet with its padding, and nothing else (no line breaks, no whitespace). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The text a base64 string encodes, or undefined when the bytes are not UTF-8 (JSON text is). */
function decodeBase64(value: string): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.from(value, "base64"));
  } catch {
    return undefined;
  }
}

function isJsonText(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false; // a syntax error (or nesting too deep to read, which cannot be judged: not valid)
  }
}

type KeywordValidate = ((schema: unknown, data: unknown, parentSchema?: Record<string, unknown>) => boolean) & { errors?: Array<Record<string, unknown>> };

function keywordValidate(keyword: string, message: string, valid: (data: string, parentSchema: Record<string, unknown>) => boolean): KeywordValidate {
  const validate: KeywordValidate = (_schema, data, parentSchema) => {
    if (typeof data !== "string" || valid(data, parentSchema ?? {})) return true;
    validate.errors = [{ keyword, message, params: {} }];
    return false;
  };
  return validate;
}

/** draft-07's contentEncoding "base64" and contentMediaType "application/json" (of the decoded text when both are given). */
function addContentKeywords(ajv: Ajv): void {
  const encoding = keywordValidate("contentEncoding", "must be base64-encoded (contentEncoding)", (data) => BASE64.test(data));
  const mediaType = keywordValidate("contentMediaType", "must be a JSON document (contentMediaType application/json)", (data, parent) => {
    if (parent.contentEncoding !== "base64") return isJsonText(data);
    if (!BASE64.test(data)) return true; // contentEncoding reports it
    const text = decodeBase64(data);
    return text !== undefined && isJsonText(text);
  });
  for (const [keyword, validate] of [
    ["contentEncoding", encoding],
    ["contentMediaType", mediaType],
  ] as const) {
    ajv.removeKeyword(keyword);
    ajv.addKeyword({ keyword, schemaType: "string", errors: true, validate } as never);
  }
}
