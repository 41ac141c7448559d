/** Small text helpers shared by prompts, messages and records: everything echoed is bounded. */

/** Cut `text` to at most `max` characters, saying how much was left out. */
export function bound(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/** A short, single-line rendering of any value for an error message. */
export function describeValue(value: unknown, max = 60): string {
  let shown: string;
  if (value === undefined) shown = "undefined";
  else if (typeof value === "string") shown = JSON.stringify(value.length > max ? value.slice(0, max) : value) + (value.length > max ? `… (${value.length} characters)` : "");
  else if (typeof value === "number" || typeof value === "boolean" || value === null) shown = String(value);
  else if (Array.isArray(value)) shown = `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  else if (typeof value === "object") {
    const keys = Object.keys(value as object);
    shown = keys.length === 0 ? "an empty object" : `an object with keys ${keys.slice(0, 5).map((k) => JSON.stringify(k.slice(0, 30))).join(", ")}${keys.length > 5 ? ", …" : ""}`;
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
