/** Small text helpers shared by prompts, messages and records: everything echoed is bounded. */

/** Cut `text` to at most `max` characters, saying how much was left out. */
export function bound(text: string, max: number): string {
  if (text.length <= max) return text;
  // Never cut a surrogate pair in half.
  const cut = max > 0 && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, cut)}… [${text.length - cut} more characters]`;
}

/**
 * `text` as a JSON string literal whose escaped content is at most `max`
 * characters (escapes such as \u0000 count at their escaped length), with "…"
 * after the closing quote when it was cut.
 */
export function quote(text: string, max: number): string {
  const { quoted, complete } = quoteBounded(text, max);
  return complete ? quoted : `${quoted}…`;
}

/** A short, single-line rendering of any value for an error message. */
export function describeValue(value: unknown, max = 60): string {
  let shown: string;
  if (value === undefined) shown = "undefined";
  else if (typeof value === "string") {
    const { quoted, complete } = quoteBounded(value, max);
    shown = complete ? quoted : `${quoted}… (${value.length} characters)`;
  } else if (typeof value === "number" || typeof value === "boolean" || value === null) shown = String(value);
  else if (Array.isArray(value)) shown = `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  else if (typeof value === "object") {
    const keys = Object.keys(value as object);
    shown =
      keys.length === 0
        ? "an empty object"
        : `an object with keys ${keys
            .slice(0, 5)
            .map((k) => quote(k, 30))
            .join(", ")}${keys.length > 5 ? ", …" : ""}`;
  } else shown = typeof value;
  return shown;
}

/** 1-based line and column of a character offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lastNewline = -1;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lastNewline = i;
    }
  }
  return { line, column: end - lastNewline };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** JSON-quote the longest prefix of `text` whose escaped form fits in `max` characters; reads only that prefix. */
/** Characters JSON.stringify escapes, plus surrogates (which must not be cut in half). */
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

function quoteBounded(text: string, max: number): { quoted: string; complete: boolean } {
  // Fast path: plain text needs neither escaping nor care at the cut.
  if (!NEEDS_CARE.test(text.length > max ? text.slice(0, max) : text)) {
    return text.length <= max ? { quoted: `"${text}"`, complete: true } : { quoted: `"${text.slice(0, max)}"`, complete: false };
  }
  let out = "";
  let used = 0;
  for (const ch of text) {
    // Iterating by code point keeps surrogate pairs whole; a lone surrogate is escaped by JSON.stringify.
    const piece = JSON.stringify(ch).slice(1, -1);
    if (out.length + piece.length > max) break;
    out += piece;
    used += ch.length;
  }
  return { quoted: `"${out}"`, complete: used === text.length };
}

/**
 * What was thrown (or a promise rejected with), as bounded text, without ever throwing itself: a
 * thrown value may be anything, including an object whose `message` getter throws or that has no
 * way to become text (a null-prototype object).
 */
export function describeThrown(error: unknown, max: number): string {
  try {
    const message = error !== null && typeof error === "object" && "message" in error ? (error as { message: unknown }).message : error;
    return bound(typeof message === "string" ? message : String(message), max);
  } catch {
    return "a value that cannot be shown as text";
  }
}
