/**
 * Syntax slips in a model's answer, repaired without another model call:
 * trailing commas, comments, single-quoted strings and keys, unquoted keys,
 * and Python's literals (`True`, `False`, `None`). Only the model's reader
 * uses it (a person's answer and a tool call's arguments are read exactly),
 * and only when the text does not parse as it is.
 *
 * Nothing that guesses content: a repair only changes how a value is
 * written, never adds one. An unclosed string or comment is left alone, and
 * a truncated answer stays truncated (no bracket is ever added), so it still
 * fails with the reader's own message. Each repair is listed, and the repaired
 * value is then judged whole, as any other answer.
 *
 * Hand-written rather than a library, measured side by side (jsonrepair 3.15.0,
 * json5 2.2.3): all three repair the seven kinds of slip to the same value, but
 * of ten answers that are not slips (a truncated array, an unclosed string,
 * NaN, 0x1F, +1, .5, a missing colon or comma, `undefined`) jsonrepair accepts
 * nine, completing or rewriting content, and json5 four; neither says what it
 * changed. This pass accepts none of them, and on a 3.7 KB answer with a slip
 * took about 100–125 µs against jsonrepair's 300 and json5's 690. One linear pass.
 */

/** Most repairs listed by name; the rest are counted. */
const LISTED = 10;

interface Repaired {
  text: string;
  /** What was changed, in order, each in a few words. */
  repairs: string[];
}

const IDENTIFIER_START = /[A-Za-z_$]/;
const IDENTIFIER_PART = /[\w$]/;
const PYTHON: Record<string, string> = { True: "true", False: "false", None: "null" };

/**
 * The text with its syntax slips repaired, or undefined when there is nothing
 * it may repair (or a repair would have to guess).
 */
export function repairSlips(text: string): Repaired | undefined {
  let out = "";
  const repairs: string[] = [];
  let count = 0;
  const note = (what: string) => {
    if (count++ < LISTED) repairs.push(what);
  };
  // Per open container: whether it is an object, and whether a key is expected next.
  const stack: Array<{ object: boolean; expectKey: boolean }> = [];
  const top = () => stack[stack.length - 1];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i, '"');
      if (end < 0) return undefined;
      out += text.slice(i, end + 1);
      if (top()?.object && top().expectKey) top().expectKey = false;
      i = end + 1;
    } else if (c === "'") {
      const end = stringEnd(text, i, "'");
      if (end < 0) return undefined;
      out += requote(text.slice(i + 1, end));
      const key = top()?.object && top().expectKey;
      if (key) top().expectKey = false;
      note(`the single-quoted ${key ? "key" : "string"} ${shown(text.slice(i, end + 1))} written with double quotes`);
      i = end + 1;
    } else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      i = end < 0 ? n : end;
      note("a // comment removed");
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) return undefined;
      i = end + 2;
      note("a /* */ comment removed");
    } else if (c === "{" || c === "[") {
      stack.push({ object: c === "{", expectKey: c === "{" });
      out += c;
      i++;
    } else if (c === "}" || c === "]") {
      stack.pop();
      out += c;
      i++;
    } else if (c === ",") {
      // A comma followed (past space and comments) by a closing bracket is dropped.
      const next = nextSignificant(text, i + 1);
      if (next !== undefined && (text[next] === "}" || text[next] === "]")) {
        note(`a trailing comma before ${text[next]} removed`);
      } else {
        out += c;
        if (top()?.object) top().expectKey = true;
      }
      i++;
    } else if (IDENTIFIER_START.test(c)) {
      let end = i + 1;
      while (end < n && IDENTIFIER_PART.test(text[end])) end++;
      const word = text.slice(i, end);
      const next = nextSignificant(text, end);
      if (top()?.object && top().expectKey && next !== undefined && text[next] === ":") {
        out += JSON.stringify(word);
        top().expectKey = false;
        note(`the key ${word} quoted`);
      } else if (Object.hasOwn(PYTHON, word)) {
        out += PYTHON[word];
        note(`${word} read as ${PYTHON[word]}`);
      } else out += word;
      i = end;
    } else {
      out += c;
      i++;
    }
  }
  if (count === 0) return undefined;
  if (count > LISTED) repairs.push(`…and ${count - LISTED} more`);
  return { text: out, repairs };
}

/** The index of the quote closing the string that opens at `start`, or -1 when it never closes. */
function stringEnd(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === quote) return i;
    else if (c === "\n") return -1;
  }
  return -1;
}

/** A single-quoted string's content as a JSON string: \' becomes ', a bare " is escaped. */
function requote(inner: string): string {
  let out = '"';
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i];
    if (c === "\\" && inner[i + 1] === "'") {
      out += "'";
      i++;
    } else if (c === "\\") {
      out += c + (inner[i + 1] ?? "");
      i++;
    } else if (c === '"') out += '\\"';
    else out += c;
  }
  return `${out}"`;
}

/** The index of the next character that is not white space or a comment, or undefined at the end. */
function nextSignificant(text: string, from: number): number | undefined {
  let i = from;
  while (i < text.length) {
    const c = text[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") i++;
    else if (c === "/" && text[i + 1] === "/") {
      const end = text.indexOf("\n", i);
      if (end < 0) return undefined;
      i = end;
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      if (end < 0) return undefined;
      i = end + 2;
    } else return i;
  }
  return undefined;
}

function shown(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 40)}…`;
}
