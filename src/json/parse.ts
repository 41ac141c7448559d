/**
 * Reads one JSON value out of a model's answer. Accepts bare JSON, JSON in a
 * ```json / ``` / ~~~ fence, and one JSON object surrounded by prose. Anything
 * else becomes an exact, bounded error message for the model, never a crash.
 *
 * Everything here is linear in the answer's length; nesting and size are
 * limited before `JSON.parse`, so a hostile answer fails cleanly. `JSON.parse`
 * stores `__proto__` as an ordinary own key, so parsing cannot pollute prototypes.
 */
import { repairSlips } from "./repair.js";
import { inexactLiteralProblem, keptFromText } from "./kept.js";
import { pathStep } from "./paths.js";
import { lineAndColumn, quote } from "../shared/text.js";

/** Limits on JSON read from text: its size and its nesting depth. */
export interface JsonLimits {
  /** Longest answer accepted, in characters. */
  maxChars: number;
  /** Deepest nesting of objects and arrays accepted. */
  maxDepth: number;
}

export const DEFAULT_JSON_LIMITS: JsonLimits = { maxChars: 1_000_000, maxDepth: 64 };

/** Where a JSON value was found in an answer: the whole answer, a fenced block, or within prose. */
export type JsonSource = "bare" | "fence" | "prose";

/** What extractJson found: the value and where it was, or why no value could be read. */
export type ExtractResult =
  /** `repairs`: the syntax slips repaired in a model's answer (./json-repair.ts), when there were any. */
  { ok: true; value: unknown; source: JsonSource; repairs?: string[] } | { ok: false; error: string };

/** Options of extractJson: its size and depth limits. */
interface ExtractOptions {
  /** Repair syntax slips (trailing commas, comments, single quotes, unquoted keys, Python literals) in text that does not parse as it is (default true). */
  repair?: boolean;
}

/** A model's answer, read tolerantly: bare JSON, a fenced block, or one object in prose; otherwise an exact, bounded error for the model. */
export function extractJson(answer: unknown, limits: Partial<JsonLimits> = {}, options: ExtractOptions = {}): ExtractResult {
  const { maxChars, maxDepth } = { ...DEFAULT_JSON_LIMITS, ...limits };
  const repairing = options.repair !== false;
  /** JSON.parse, then (for a model's answer) the same text with its syntax slips repaired; the text read is what the duplicate-key check reads. */
  const read = (body: string): { ok: true; value: unknown; text: string; repairs?: string[] } | { ok: false; error: Error } => {
    const plain = parse(body);
    if (plain.ok) return { ...plain, text: body };
    const repaired = repairing ? repairSlips(body) : undefined;
    if (repaired === undefined) return plain;
    const again = parse(repaired.text);
    return again.ok ? { ok: true, value: again.value, text: repaired.text, repairs: repaired.repairs } : plain;
  };
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
    const whole = read(text);
    if (whole.ok) return accept(whole.text, whole.value, "bare", whole.repairs);
    if (first === "{" || first === "[") {
      // It starts like JSON: report its own error, unless it is one clean object followed by
      // prose, or a later part is a clean object (both are read as prose below).
      const lead = scan.segments[0];
      const cleanObject = first === "{" && lead !== undefined && lead.start === 0 && read(text.slice(0, lead.end)).ok;
      if (scan.segments.length <= 1 && !cleanObject) {
        const problem = parseProblem(text, whole.error, scan);
        return fail(problem.truncated ? `T${problem.detail.slice(1)}` : `The answer is not valid JSON: ${problem.detail}`);
      }
    }
  }

  // 2. Fenced blocks.
  const fences = findFences(text);
  if (fences.length > 0) {
    const parsed: unknown[] = [];
    let firstError: string | undefined;
    let parsedBody = "";
    let parsedRepairs: string[] | undefined;
    for (const fence of fences) {
      const scan = scanBrackets(fence.body, maxDepth);
      if (scan.tooDeep) return fail(tooDeepMessage(maxDepth));
      const result = read(fence.body);
      if (result.ok) {
        parsed.push(result.value);
        parsedBody = result.text;
        parsedRepairs = result.repairs;
      } else if (firstError === undefined && (fence.lang === "" || /json/i.test(fence.lang) || /^\s*[{[]/.test(fence.body))) {
        const locate = (pos: number) => {
          const at = lineAndColumn(fence.body, pos);
          return { line: fence.bodyLine + at.line - 1, column: at.line === 1 ? fence.bodyColumn + at.column - 1 : at.column };
        };
        const { detail } = parseProblem(fence.body, result.error, scan, locate);
        firstError = `The ${fence.closed ? "" : "unclosed "}${fence.marker}${fence.lang} block starting at line ${fence.line} is not valid JSON: ${detail}`;
      }
    }
    if (parsed.length === 1) return accept(parsedBody, parsed[0], "fence", parsedRepairs);
    if (parsed.length > 1) return fail(`The answer has ${parsed.length} separate JSON blocks; reply with exactly one JSON object.`);
    if (firstError) return fail(firstError);
  }

  // 3. One object in prose.
  const scan = scanBrackets(text, maxDepth, "{");
  if (scan.tooDeep) return fail(tooDeepMessage(maxDepth));
  const candidates: unknown[] = [];
  let candidateBody = "";
  let candidateRepairs: string[] | undefined;
  let firstError: string | undefined;
  for (const seg of scan.segments) {
    const body = text.slice(seg.start, seg.end);
    const result = read(body);
    if (result.ok) {
      candidates.push(result.value);
      candidateBody = result.text;
      candidateRepairs = result.repairs;
    } else if (firstError === undefined) {
      const at = lineAndColumn(text, seg.start);
      const { detail } = parseProblem(body, result.error, undefined, (pos) => lineAndColumn(text, seg.start + pos));
      firstError = `The JSON object starting at line ${at.line}, column ${at.column} is not valid JSON: ${detail}`;
    }
  }
  if (candidates.length === 1) return accept(candidateBody, candidates[0], "prose", candidateRepairs);
  if (candidates.length > 1) return fail(`The answer has ${candidates.length} separate JSON objects; reply with exactly one JSON object.`);
  if (firstError) return fail(firstError);
  if (scan.unclosedAt !== undefined) {
    const start = scan.unclosedAt;
    const at = lineAndColumn(text, start);
    const rest = text.slice(start);
    const result = parse(rest);
    const problem = result.ok ? undefined : parseProblem(rest, result.error, undefined, (pos) => lineAndColumn(text, start + pos));
    if (problem && !problem.truncated) {
      // Never closed because a bracket is wrong, not because the answer was cut off.
      return fail(`The JSON object starting at line ${at.line}, column ${at.column} is not valid JSON: ${problem.detail}`);
    }
    return fail(
      `The JSON is truncated: the object starting at line ${at.line}, column ${at.column} is never closed (the answer ends after ${text.length} characters).`,
    );
  }
  return fail(`The answer contains no JSON object; reply with one JSON object and nothing else. The answer began: ${quote(text, 80)}`);
}

/**
 * Exactly one JSON value: a person's answer or a tool call's arguments. The
 * whole text (whitespace around it aside) must be one JSON value, with no
 * field named twice; nothing is looked for in prose or fences, and nothing
 * after the value is ignored. Bounded like `extractJson`.
 */
export function parseExactJson(text: unknown, limits: Partial<JsonLimits> = {}, what = "the value"): ExtractResult {
  const { maxChars, maxDepth } = { ...DEFAULT_JSON_LIMITS, ...limits };
  const What = what.charAt(0).toUpperCase() + what.slice(1);
  const verb = /s$/.test(what) ? "are" : "is";
  if (typeof text !== "string") return fail(`${What} ${verb} ${text === null ? "null" : typeof text}, not JSON text.`);
  if (text.length > maxChars) return fail(`${What} ${verb} ${text.length} characters long, over the limit of ${maxChars}.`);
  if (text.trim().length === 0) return fail(`${What} ${verb} empty; give exactly one JSON value.`);
  const scan = scanBrackets(text, maxDepth);
  if (scan.tooDeep) return fail(tooDeepMessage(maxDepth));
  const result = parse(text);
  if (!result.ok) {
    const problem = parseProblem(text, result.error, scan);
    return fail(
      problem.truncated
        ? `T${problem.detail.slice(1)}`
        : `${What} ${verb} not valid JSON (exactly one JSON value is expected, nothing before or after it): ${problem.detail}`,
    );
  }
  return accept(text, result.value, "bare");
}

function fail(error: string): ExtractResult {
  return { ok: false, error };
}

/**
 * The value read, as a checkpoint keeps it (./kept.ts: each -0 made 0), unless its text names a field twice
 * (JSON.parse would silently keep the last one), writes a number the value does not hold (`1e-400` read as 0),
 * or it holds what would not be kept as judged (a number out of range, a checkpoint marker's shape).
 */
function accept(json: string, value: unknown, source: JsonSource, repairs?: string[]): ExtractResult {
  const problem = textProblem(json);
  if (problem !== null) return fail(problem);
  const kept = keptFromText(value);
  if (!kept.ok) return fail(keptMessage(kept.error));
  return repairs === undefined ? { ok: true, value: kept.value, source } : { ok: true, value: kept.value, source, repairs };
}

/**
 * Why a value the model's reader made, then reshaped (an answer mapped back from a provider's strict form),
 * would not be kept as judged, in the reader's words; undefined when it would (each -0 made 0 in place).
 */
export function unkeptValueProblem(value: unknown): string | undefined {
  const kept = keptFromText(value);
  return kept.ok ? undefined : keptMessage(kept.error);
}

function keptMessage(error: string): string {
  return `The JSON cannot be kept as written: ${error}.`;
}

/**
 * What the text of a valid JSON value says that its parsed value does not, in one linear pass: an object key
 * that appears twice in the same object, or a number literal its double does not hold exactly; null when none.
 */
function textProblem(json: string): string | null {
  type Frame = { object: boolean; keys?: Set<string>; label: string; index: number; expectKey: boolean };
  const stack: Frame[] = [];
  let pendingLabel = "";
  const pathOf = () =>
    stack
      .map((f) => f.label)
      .join("")
      .replace(/^\./, "");
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34 /* " */) {
      const start = i;
      let escaped = false;
      for (i++; i < json.length; i++) {
        const d = json.charCodeAt(i);
        if (d === 92) {
          i++;
          escaped = true;
        } else if (d === 34) break;
      }
      const top = stack[stack.length - 1];
      if (top?.object && top.expectKey) {
        // Only a key with an escape needs decoding (the common key is its text between the quotes).
        const key = escaped ? (JSON.parse(json.slice(start, i + 1)) as string) : json.slice(start + 1, i);
        if (top.keys!.has(key)) {
          const path = pathOf();
          return `The JSON names the field ${quote(key, 40)} twice in ${path === "" ? "the top-level object" : path}; each field may appear only once.`;
        }
        top.keys!.add(key);
        top.expectKey = false;
        pendingLabel = pathStep(key, false);
      }
      continue;
    }
    if (c === 45 /* - */ || (c >= 48 && c <= 57) /* 0-9 */) {
      const start = i;
      while (i + 1 < json.length && isNumberChar(json.charCodeAt(i + 1))) i++;
      const problem = inexactLiteralProblem(json.slice(start, i + 1));
      if (problem !== undefined) {
        const top = stack[stack.length - 1];
        const path = (pathOf() + (top === undefined ? "" : top.object ? pendingLabel : `[${top.index}]`)).replace(/^\./, "");
        return `The JSON cannot be kept as written: ${path === "" ? "the value" : path} ${problem}.`;
      }
      continue;
    }
    if (c === 123 /* { */ || c === 91 /* [ */) {
      const parent = stack[stack.length - 1];
      const label = parent === undefined ? "" : parent.object ? pendingLabel : `[${parent.index}]`;
      stack.push({ object: c === 123, keys: c === 123 ? new Set() : undefined, label, index: 0, expectKey: c === 123 });
    } else if (c === 125 || c === 93) stack.pop();
    else if (c === 44 /* , */) {
      const top = stack[stack.length - 1];
      if (top?.object) top.expectKey = true;
      else if (top) top.index++;
    }
  }
  return null;
}

/** A character of a JSON number after its first: a digit, `.`, `e`, `E`, `+` or `-`. */
function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
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
  /** 1-based line of the opening marker. */
  line: number;
  /** 1-based line and column where the body starts. */
  bodyLine: number;
  bodyColumn: number;
  closed: boolean;
}

/** Fenced blocks (``` or ~~~, three or more), found line by line. */
function findFences(text: string): Fence[] {
  const lines = text.split("\n");
  const fences: Fence[] = [];
  let open: { marker: string; lang: string; line: number; body: string[]; bodyLine: number; bodyColumn: number } | undefined;
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (open) {
      if (line.startsWith(open.marker) && line.slice(open.marker.length).replace(/[`~]/g, "").trim() === "") {
        fences.push({ ...open, body: open.body.join("\n"), closed: true });
        open = undefined;
      } else open.body.push(lines[n]);
      continue;
    }
    const m = /^(`{3,}|~{3,})\s*([\w+.-]*)(.*)$/.exec(line);
    if (m) {
      const indent = lines[n].length - lines[n].trimStart().length;
      const rest = m[3];
      const close = rest.lastIndexOf(m[1]);
      if (close >= 0) {
        // A fence that opens and closes on one line: ```{"a":1}``` or ```json {"a":1}```.
        // A word right after the marker is a language tag when something follows it; else it is the body (```true```).
        const inner = rest.slice(0, close);
        const tagged = m[2] !== "" && inner.trim() !== "";
        const body = (tagged ? inner : m[2] + inner).trim();
        const column = lines[n].indexOf(body, indent + m[1].length) + 1;
        fences.push({ marker: m[1], lang: tagged ? m[2] : "", body, line: n + 1, bodyLine: n + 1, bodyColumn: Math.max(1, column), closed: true });
      } else if (rest.trim()) {
        const column = indent + line.length - rest.length + 1;
        open = { marker: m[1], lang: m[2], line: n + 1, body: [rest], bodyLine: n + 1, bodyColumn: column };
      } else open = { marker: m[1], lang: m[2], line: n + 1, body: [], bodyLine: n + 2, bodyColumn: 1 };
    }
  }
  if (open) fences.push({ ...open, body: open.body.join("\n"), closed: false });
  return fences;
}

/**
 * What is wrong with text that `JSON.parse` refused: whether it was cut off
 * (it ends before every object and array is closed), and a bounded
 * description with line, column and an excerpt. `locate` maps an offset in
 * `text` to the line and column reported (for text taken out of a longer answer).
 */
function parseProblem(
  text: string,
  error: Error,
  scan?: BracketScan,
  locate: (pos: number) => { line: number; column: number } = (pos) => lineAndColumn(text, pos),
): { truncated: boolean; detail: string } {
  const end = text.trimEnd().length;
  if (end === 0) return { truncated: false, detail: "it is empty." };
  const raw = String(error?.message ?? error);
  let message = raw;
  let pos: number | undefined;
  const positioned = /^([\s\S]*?)\s+(?:in JSON\s+)?at position (\d+)/.exec(raw);
  if (positioned) {
    message = positioned[1];
    pos = Number(positioned[2]);
  } else {
    // V8 sometimes quotes the source instead of a position: `Unexpected token 'N', "{...}" is not valid JSON`.
    const token = /^Unexpected token '([\s\S]+?)', (\.\.\.)?"([\s\S]*)"(?:\.\.\.)? is not valid JSON$/.exec(raw);
    if (token) {
      message = `Unexpected token '${JSON.stringify(token[1]).slice(1, -1)}'`;
      pos = locateToken(text, token[1], token[3], token[2] !== undefined);
    }
  }
  message = message.replace(/^SyntaxError:\s*/, "");
  if (/Unexpected end of JSON input/i.test(raw) || (pos !== undefined && pos >= end) || (pos === undefined && scan?.unclosedAt !== undefined)) {
    return { truncated: true, detail: `the JSON is truncated: it ends after ${end} characters before every object and array is closed.` };
  }
  if (pos === undefined) return { truncated: false, detail: `${message.slice(0, 200)}.` };
  const at = locate(pos);
  const excerpt = quote(text.slice(Math.max(0, pos - 20), pos + 20).replace(/\s+/g, " "), 60);
  return { truncated: false, detail: `${message} at line ${at.line}, column ${at.column} (near ${excerpt}).${hint(text, pos)}` };
}

/** What to change, for the mistakes models make most often. */
function hint(text: string, pos: number): string {
  if (text.startsWith("//", pos) || text.startsWith("/*", pos)) return " JSON does not allow comments.";
  if (/^-?(?:NaN|Infinity)\b|^undefined\b/.test(text.slice(pos, pos + 10))) return " JSON has no NaN, Infinity or undefined; use a number or null.";
  if (text[pos] === "'") return " JSON strings and keys need double quotes.";
  if (text[pos] === "}" || text[pos] === "]") {
    let i = pos - 1;
    while (i >= 0 && /\s/.test(text[i])) i--;
    if (text[i] === ",") return " JSON does not allow a trailing comma.";
  }
  return "";
}

/**
 * Where the token V8 complained about is. V8 quotes up to ten characters on
 * each side of it, marking a cut with "..."; when it quotes the whole (short)
 * text, the token ends the shortest prefix that no JSON text can start with.
 */
function locateToken(text: string, token: string, context: string, cutBefore: boolean): number | undefined {
  if (cutBefore) {
    for (let i = text.indexOf(context); i >= 0; i = text.indexOf(context, i + 1)) {
      if (text.startsWith(token, i + 10)) return i + 10;
    }
  } else if (context.length < text.length && text.startsWith(context)) {
    const p = context.length - 10;
    if (p >= 0 && text.startsWith(token, p)) return p;
  }
  if (text.length <= 64) {
    for (let k = 1; k <= text.length; k++) if (!viablePrefix(text.slice(0, k))) return k - 1;
  }
  const p = firstOutsideStrings(text, token);
  return p >= 0 ? p : undefined;
}

/** Whether some JSON text starts with `prefix`. */
function viablePrefix(prefix: string): boolean {
  const result = parse(prefix);
  if (result.ok) return true;
  const raw = String(result.error?.message ?? result.error);
  if (/Unexpected end of JSON input/i.test(raw)) return true;
  const m = /at position (\d+)/.exec(raw);
  return m !== null && Number(m[1]) >= prefix.trimEnd().length;
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
