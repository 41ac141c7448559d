/**
 * Reads one JSON value out of a model's answer. Accepts bare JSON, JSON in a
 * ```json / ``` / ~~~ fence, and one JSON object surrounded by prose. Anything
 * else becomes an exact, bounded error message for the model, never a crash.
 *
 * Everything here is linear in the answer's length; nesting and size are
 * limited before `JSON.parse`, so a hostile answer fails cleanly. `JSON.parse`
 * stores `__proto__` as an ordinary own key, so parsing cannot pollute prototypes.
 */
import { bound, lineAndColumn } from "./text.js";

export interface JsonLimits {
  /** Longest answer accepted, in characters. */
  maxChars: number;
  /** Deepest nesting of objects and arrays accepted. */
  maxDepth: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxChars: 1_000_000, maxDepth: 64 };

export type JsonSource = "bare" | "fence" | "prose";

export type ExtractResult =
  | { ok: true; value: unknown; source: JsonSource }
  | { ok: false; error: string };

export function extractJson(answer: unknown, limits: Partial<JsonLimits> = {}): ExtractResult {
  const { maxChars, maxDepth } = { ...DEFAULT_JSON_LIMITS, ...limits };
  if (typeof answer !== "string") return fail(`The answer was ${answer === null ? "null" : typeof answer}, not text; reply with one JSON object.`);
  const text = answer.replace(/^\uFEFF/, "").trim();
  if (text.length === 0) return fail("The answer was empty; reply with one JSON object and nothing else.");
  if (text.length > maxChars) {
    return fail(`The answer is ${text.length} characters long, over the limit of ${maxChars}; reply with the JSON object only.`);
  }

  // 1. The whole answer is JSON.
  const first = text[0];
  if (first === "{" || first === "[" || first === '"' || /^[-\d tfn]/.test(first)) {
    const scan = scanBrackets(text, maxDepth);
    if (scan.tooDeep) return fail(tooDeepMessage(maxDepth));
    const whole = parse(text);
    if (whole.ok) return { ok: true, value: whole.value, source: "bare" };
    if (first === "{" || first === "[") {
      // It starts like JSON: report its own error unless a later part is a clean object.
      if (scan.segments.length <= 1) return fail(describeParseError(text, whole.error, scan));
    }
  }

  // 2. Fenced blocks.
  const fences = findFences(text);
  if (fences.length > 0) {
    const parsed: unknown[] = [];
    let firstError: string | undefined;
    for (const fence of fences) {
      const scan = scanBrackets(fence.body, maxDepth);
      if (scan.tooDeep) return fail(tooDeepMessage(maxDepth));
      const result = parse(fence.body);
      if (result.ok) parsed.push(result.value);
      else if (firstError === undefined && (fence.lang === "" || /json/i.test(fence.lang) || /^\s*[{[]/.test(fence.body))) {
        firstError = `The ${fence.closed ? "" : "unclosed "}${fence.marker}${fence.lang} block starting at line ${fence.line} is not valid JSON: ${describeParseError(fence.body, result.error, scan)}`;
      }
    }
    if (parsed.length === 1) return { ok: true, value: parsed[0], source: "fence" };
    if (parsed.length > 1) return fail(`The answer has ${parsed.length} separate JSON blocks; reply with exactly one JSON object.`);
    if (firstError) return fail(firstError);
  }

  // 3. One object in prose.
  const scan = scanBrackets(text, maxDepth, "{");
  if (scan.tooDeep) return fail(tooDeepMessage(maxDepth));
  const candidates: unknown[] = [];
  let firstError: string | undefined;
  for (const seg of scan.segments) {
    const body = text.slice(seg.start, seg.end);
    const result = parse(body);
    if (result.ok) candidates.push(result.value);
    else if (firstError === undefined) {
      const at = lineAndColumn(text, seg.start);
      firstError = `The JSON object starting at line ${at.line}, column ${at.column} is not valid JSON: ${describeParseError(body, result.error)}`;
    }
  }
  if (candidates.length === 1) return { ok: true, value: candidates[0], source: "prose" };
  if (candidates.length > 1) return fail(`The answer has ${candidates.length} separate JSON objects; reply with exactly one JSON object.`);
  if (firstError) return fail(firstError);
  if (scan.unclosedAt !== undefined) {
    const at = lineAndColumn(text, scan.unclosedAt);
    return fail(`The JSON is truncated: the object starting at line ${at.line}, column ${at.column} is never closed (the answer ends after ${text.length} characters).`);
  }
  return fail(`The answer contains no JSON object; reply with one JSON object and nothing else. The answer began: ${JSON.stringify(bound(text, 80))}`);
}

function fail(error: string): ExtractResult {
  return { ok: false, error };
}

function tooDeepMessage(maxDepth: number): string {
  return `The JSON nests deeper than ${maxDepth} levels; the expected object is shallow.`;
}

function parse(text: string): { ok: true; value: unknown } | { ok: false; error: Error } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: error as Error };
  }
}

interface BracketScan {
  /** Top-level bracketed segments (start inclusive, end exclusive). */
  segments: Array<{ start: number; end: number }>;
  /** Offset of a top-level opening bracket that never closes. */
  unclosedAt?: number;
  tooDeep: boolean;
}

/**
 * One linear pass over `text`, string-aware, finding top-level bracketed
 * segments and measuring nesting depth. With `only = "{"` segments start
 * only at braces (objects in prose; square brackets in prose are usually not JSON).
 */
function scanBrackets(text: string, maxDepth: number, only?: "{"): BracketScan {
  const segments: Array<{ start: number; end: number }> = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (depth === 0) {
      if (c === 123 /* { */ || (c === 91 /* [ */ && only === undefined)) {
        depth = 1;
        start = i;
      }
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      depth++;
      if (depth > maxDepth) return { segments, tooDeep: true };
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
      if (depth === 0) segments.push({ start, end: i + 1 });
    }
  }
  return { segments, unclosedAt: depth > 0 ? start : undefined, tooDeep: false };
}

interface Fence {
  marker: string;
  lang: string;
  body: string;
  line: number;
  closed: boolean;
}

/** Fenced blocks (``` or ~~~, three or more), found line by line. */
function findFences(text: string): Fence[] {
  const lines = text.split("\n");
  const fences: Fence[] = [];
  let open: { marker: string; lang: string; line: number; body: string[] } | undefined;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (open) {
      if (line.startsWith(open.marker) && line.slice(open.marker.length).replace(/[`~]/g, "").trim() === "") {
        fences.push({ marker: open.marker, lang: open.lang, body: open.body.join("\n"), line: open.line, closed: true });
        open = undefined;
      } else open.body.push(lines[n]);
      continue;
    }
    const m = /^(`{3,}|~{3,})\s*([\w+.-]*)(.*)$/.exec(line);
    if (m) {
      // A fence that opens and closes on one line: ```{"a":1}```
      const rest = m[3];
      const close = rest.lastIndexOf(m[1]);
      if (close >= 0) fences.push({ marker: m[1], lang: "", body: (m[2] + rest.slice(0, close)).trim(), line: n + 1, closed: true });
      else open = { marker: m[1], lang: m[2], line: n + 1, body: rest.trim() ? [rest] : [] };
    }
  }
  if (open) fences.push({ marker: open.marker, lang: open.lang, body: open.body.join("\n"), line: open.line, closed: false });
  return fences;
}

/** Turn V8's "... at position N" into line/column and a bounded excerpt. */
function describeParseError(text: string, error: Error, scan?: BracketScan): string {
  const raw = String(error.message ?? error);
  let m: { 1: string } | null = (/at position (\d+)/.exec(raw) as { 1: string } | null);
  let message = raw.replace(/\s*in JSON at position \d+.*$/s, "").replace(/\s*\(line \d+ column \d+\)$/, "");
  // V8 sometimes quotes the source instead of a position: `Unexpected token 'N', "{...}" is not valid JSON`.
  const token = /^Unexpected token '(.+?)', /s.exec(raw);
  if (token) {
    message = `Unexpected token '${token[1]}'`;
    const pos = firstOutsideStrings(text, token[1]);
    if (pos >= 0) m = { 1: String(pos) };
  }
  if (/Unexpected end of JSON input/i.test(raw) || (scan && scan.unclosedAt !== undefined && !m)) {
    return `the JSON is truncated: it ends after ${text.length} characters before every object and array is closed.`;
  }
  if (!m) return `${message}.`;
  const pos = Number(m[1]);
  const at = lineAndColumn(text, pos);
  const excerpt = text.slice(Math.max(0, pos - 20), pos + 20).replace(/\s+/g, " ");
  message = message.replace(/^SyntaxError:\s*/, "");
  return `${message} at line ${at.line}, column ${at.column} (near ${JSON.stringify(excerpt)}).`;
}

/** Offset of the first occurrence of `needle` outside string literals, or -1. */
function firstOutsideStrings(text: string, needle: string): number {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (text.startsWith(needle, i)) return i;
  }
  return -1;
}
