/**
 * The one way a field is named in a message: `a.b[0]["odd key"]`. Every
 * message that points into a value (schema errors, zod issues, rules, the
 * parsers, the streaming checks) renders its path here, so a model sees one
 * form everywhere. Long keys are cut, so a hostile key cannot flood a prompt.
 */

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MAX_KEY_CHARS = 40;

/** One step of a path: an array index, or a field name (quoted when it is not an identifier). */
export function pathStep(key: string | number, first: boolean): string {
  if (typeof key === "number") return `[${key}]`;
  if (IDENTIFIER.test(key)) return first ? key : `.${key}`;
  return `[${JSON.stringify(key.length > MAX_KEY_CHARS ? `${key.slice(0, MAX_KEY_CHARS)}…` : key)}]`;
}

/** A readable path from its steps; "" for the root. */
export function pathOf(steps: ReadonlyArray<string | number | symbol>): string {
  let out = "";
  for (const step of steps) out += pathStep(typeof step === "symbol" ? String(step) : step, out === "");
  return out;
}

/** A child's readable path, from its parent's. */
export function childPath(parent: string, key: string | number): string {
  return parent + pathStep(key, parent === "");
}

const readable = new Map<string, string>();

/** A JSON pointer (/a/0/b) as a readable path (a[0].b); "" for the root. Array indices are the all-digit segments. */
export function pointerToPath(pointer: string): string {
  if (pointer === "") return "";
  let out = readable.get(pointer);
  if (out !== undefined) return out;
  out = "";
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    // Digits stay as written (a long run of them is no safe integer).
    out += /^\d+$/.test(key) ? `[${key}]` : pathStep(key, out === "");
  }
  // The same few paths recur in every invalid answer; keep a small cache of them.
  if (readable.size >= 1_000) readable.clear();
  readable.set(pointer, out);
  return out;
}
