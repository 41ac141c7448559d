/**
 * Reads an answer while it streams: finds where its JSON value starts (bare,
 * in a fenced block, or after prose: where the check step's "model" reader
 * looks; a tool call's arguments are judged as the same kind of text), parses
 * it incrementally, and tells a listener each value as it opens and closes,
 * with its path.
 *
 * Lexing is @streamparser/json's tokenizer (UTF-8, escapes and surrogates as
 * JSON.parse reads them); the grammar, the paths, a field named twice and the
 * nesting bound are here. The reader judges no value against a spec: it says
 * what is certain about the text (a value that can no longer parse, one
 * nested too deep, an answer past the size limit) and, where the answer leaves
 * what it can follow, that it is unsure.
 *
 * The reader follows the first value it finds. The check step's reader may
 * still choose another one (a later fenced block replaces a bare value, a
 * broken one, or an object in prose; a later object in prose replaces a
 * broken one), so what the reader says about its value becomes certain only
 * once nothing later can replace it: see `fenceClosedAt` and
 * ./partial-check.ts. Only an answer too large, or bare JSON nested too deep,
 * is refused whatever follows (`certain`).
 */
import { Tokenizer, TokenType } from "@streamparser/json";
import { DEFAULT_JSON_LIMITS, type JsonLimits, type JsonSource } from "../json/parse.js";
import { pathOf } from "../json/paths.js";
import { quote } from "../shared/text.js";

export type Step = string | number;

/**
 * looking: no value has started; reading: inside it; after: it closed inside
 * a fenced block that has not closed yet; done: it closed; broken: the answer
 * can no longer hold a valid value; unsure: the answer left what the reader
 * can follow, so nothing more is said about it.
 */
type ReaderPhase = "looking" | "reading" | "after" | "done" | "broken" | "unsure";

interface ReaderListener {
  /** An object or array opened at `path` (the root's path is []). */
  opened(path: readonly Step[], container: object): void;
  /** A value closed: a scalar, or a container whose members all closed. `parent` is the container it is a member of. */
  closed(path: readonly Step[], value: unknown, parent: object | undefined): void;
  /** The object being read in prose turned out not to be JSON: everything said about it is withdrawn. */
  restarted(): void;
}

interface Frame {
  value: Record<string, unknown> | unknown[];
  array: boolean;
  /** What the next token must be. */
  expect: "key-or-close" | "key" | "colon" | "value" | "value-or-close" | "comma-or-close";
  key?: string;
  keys?: Set<string>;
  index: number;
  /** Rendered paths of the members that closed. */
  complete: string[];
}

type Token = { token: TokenType; value: unknown; offset: number; partial?: boolean };

/** Most paths `completePaths` lists (an answer with many closed items would make every event long). */
const MAX_COMPLETE_PATHS = 1_000;
/** Thrown from the token callback to stop the tokenizer: the root closed, or the reader has said all it can. */
const STOP = Symbol("stop reading");
const WHITESPACE = /\s/;
/** Whitespace within a line (the extractor reads fences line by line). */
const LINE_SPACE = /[^\S\n]/;

export class AnswerReader {
  phase: ReaderPhase = "looking";
  source?: JsonSource;
  /** Why the answer is broken, or why the reader is unsure. */
  problem?: string;
  /** The answer is broken whatever follows (bare JSON nested too deep); other breaks a later value may replace. */
  certain = false;
  /** Where the marker that closed the fenced block starts, once the value closed and the marker came (its line may not have ended). */
  fenceClosedAt?: number;
  /** Set once the answer is past the size limit (certain: it only grows). */
  tooLarge?: string;
  /** The value read so far: containers grow as members close (live; `snapshot` copies it). */
  root: unknown = undefined;
  /** The string being written at a value's place, not closed yet: its place in the innermost open container, and its text so far. */
  private partialStep?: Step;
  private partialText = "";
  /** Values closed so far. */
  closedValues = 0;

  /**
   * The text not yet consumed, from character `base` of the answer on. Only
   * this window is kept (and read), so a long answer costs one pass: indexing a
   * string that keeps growing would copy all of it on every piece.
   */
  private buf = "";
  private base = 0;
  private total = 0;
  private readonly limits: JsonLimits;
  private readonly frames: Frame[] = [];
  private readonly path: Step[] = [];
  // The tokenizer of the value being read, and where its input stands.
  private tokenizer?: Tokenizer;
  private feedPos = 0;
  /** Character index in `text` of the first byte the tokenizer's current write holds (a held surrogate included). */
  private writeStart = 0;
  private bytesBefore = 0;
  private heldSurrogate = "";
  private closedAtByte = -1;
  private failure?: string;
  // Size, as the check step measures it.
  private firstSignificant = -1;
  // Prose: the extractor's bracket scan (objects start segments) and its fence search, line by line.
  private scanPos = 0;
  private depth = 0;
  private inString = false;
  private squares = 0;
  private atLineStart = true;
  // Fenced blocks.
  private fence?: { marker: string; valueOnOpenerLine: boolean };
  private bodyPos = 0;
  private afterPos = 0;
  /** A line ended between the value and the character being read after it. */
  private afterNewline = false;

  constructor(
    private readonly listener: ReaderListener,
    limits: Partial<JsonLimits> = {},
  ) {
    this.limits = { ...DEFAULT_JSON_LIMITS, ...limits };
  }

  /** Characters received. */
  get received(): number {
    return this.total;
  }

  /** The value so far, with the string being written in its place: a copy, safe to hand on. */
  snapshot(): unknown {
    const copy = copyJson(this.root);
    if (this.partialStep !== undefined && copy !== undefined) setAt(copy, [...this.path, this.partialStep], this.partialText);
    return copy;
  }

  /**
   * The paths of the largest complete parts: each closed value whose container
   * is still open (at most MAX_COMPLETE_PATHS, outermost first), or "" once the
   * root closed.
   */
  completePaths(): string[] {
    if (this.root === undefined) return [];
    if (this.frames.length === 0) return this.phase === "reading" || this.phase === "looking" ? [] : [""];
    const out: string[] = [];
    for (const frame of this.frames) {
      for (const path of frame.complete) {
        if (out.length >= MAX_COMPLETE_PATHS) return out;
        out.push(path);
      }
    }
    return out;
  }

  /** Feed the next piece of the answer. */
  write(piece: string): void {
    if (piece.length === 0) return;
    const start = this.total;
    this.buf += piece;
    this.total += piece.length;
    this.measure(piece, start);
    for (let guard = 0; this.active && guard < 1_000_000; guard++) {
      const { phase, source, feedPos, scanPos, bodyPos, afterPos } = this;
      this.step();
      // No step moved: the reader waits for more text.
      if (
        this.phase === phase &&
        this.source === source &&
        this.feedPos === feedPos &&
        this.scanPos === scanPos &&
        this.bodyPos === bodyPos &&
        this.afterPos === afterPos
      )
        break;
    }
    this.trim();
  }

  /** The character at `i` of the answer (inside the window). */
  private at(i: number): string {
    return this.buf[i - this.base];
  }

  /** Drop what no step will read again. */
  private trim(): void {
    let keep: number;
    if (!this.active) keep = this.total;
    else if (this.source === undefined) keep = this.base;
    else if (this.phase === "reading") keep = this.source === "prose" ? Math.min(this.scanPos, this.feedPos) : this.feedPos;
    else if (this.phase === "after") keep = this.afterPos;
    else if (this.source === "fence") keep = this.bodyPos;
    else if (this.source === "prose") keep = this.scanPos;
    else keep = this.feedPos;
    if (keep > this.base) {
      this.buf = this.buf.slice(keep - this.base);
      this.base = keep;
    }
  }

  private get active(): boolean {
    return this.phase === "looking" || this.phase === "reading" || this.phase === "after";
  }

  private step(): void {
    if (this.phase === "reading") {
      // The value's tokenizer sees the new text first; in prose the bracket scan then follows it.
      this.feed();
      if (this.source === "prose" && (this.phase === "reading" || this.phase === "looking")) this.prose();
      return;
    }
    if (this.phase === "after") return this.afterValue();
    if (this.source === undefined) return this.decide();
    if (this.source === "bare") return this.startBare();
    if (this.source === "fence") return this.fenceBody();
    return this.prose();
  }

  /** The answer's size as the check step measures it: the text, trimmed. */
  private measure(piece: string, start: number): void {
    let last = -1;
    for (let k = piece.length - 1; k >= 0; k--) {
      if (!WHITESPACE.test(piece[k])) {
        last = start + k;
        break;
      }
    }
    if (last < 0) return;
    if (this.firstSignificant < 0) {
      for (let k = 0; start + k <= last; k++) {
        if (!WHITESPACE.test(piece[k])) {
          this.firstSignificant = start + k;
          break;
        }
      }
    }
    if (last - this.firstSignificant + 1 > this.limits.maxChars) {
      this.tooLarge ??= `the answer is more than ${this.limits.maxChars} characters long (the limit)`;
    }
  }

  /** The first character decides: "{" or "[" is bare JSON; anything else is prose. */
  private decide(): void {
    if (this.firstSignificant < 0) return;
    const c = this.at(this.firstSignificant);
    this.source = c === "{" || c === "[" ? "bare" : "prose";
    this.scanPos = this.base;
  }

  private startBare(): void {
    let i = Math.max(this.feedPos, this.base);
    while (i < this.total && WHITESPACE.test(this.at(i))) i++;
    this.feedPos = i;
    if (i >= this.total) return;
    if (this.at(i) !== "{" && this.at(i) !== "[") return this.unsure("the value is not an object or an array");
    this.begin(i);
  }

  /**
   * Prose, as the extractor reads it: a line that starts with ``` or ~~~
   * opens a fenced block (fenced blocks come first), and an object starts at
   * a "{" outside any earlier bracketed segment. A segment that is not JSON is
   * skipped to its end, as the extractor's bracket scan skips it.
   */
  private prose(): void {
    const text = this.buf;
    const base = this.base;
    let i = this.scanPos;
    for (; i < this.total; i++) {
      if (this.atLineStart) {
        const opener = readOpener(text, i - base);
        if (opener === "wait") break;
        if (opener !== "no") {
          this.scanPos = i;
          this.openFence({ ...opener, at: opener.at + base });
          return;
        }
        this.atLineStart = false;
      }
      const c = text[i - base];
      if (c === "\n") this.atLineStart = true;
      if (this.inString) {
        if (c === "\\") i++;
        else if (c === '"') this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        // The extractor starts no segment at "[" in prose, so an array's objects would each be read as one:
        // an object inside a "[" is one value among several, which the reader does not follow.
        if (c === "[") this.squares++;
        else if (c === "]" && this.squares > 0) this.squares--;
        if (c === "{") {
          this.depth = 1;
          if (this.squares > 0) return this.unsure('an object in prose follows a "[" that has not closed');
          if (this.phase === "looking") {
            // A new object: its tokenizer reads ahead, and the scan resumes after its "{" on the next step.
            this.scanPos = i + 1;
            this.begin(i);
            return;
          }
        }
        continue;
      }
      if (c === '"') this.inString = true;
      else if (c === "{" || c === "[") {
        if (++this.depth > this.limits.maxDepth) return this.broken(tooDeep(this.limits.maxDepth));
      } else if (c === "}" || c === "]") this.depth--;
    }
    this.scanPos = Math.min(i, this.total);
  }

  private openFence(opener: Exclude<ReturnType<typeof readOpener>, "no" | "wait">): void {
    if (this.phase === "reading") this.abandon();
    if (opener.kind === "unsure") return this.unsure("the fenced block does not start with JSON");
    this.source = "fence";
    this.fence = { marker: opener.marker, valueOnOpenerLine: opener.kind === "value" };
    this.bodyPos = opener.at;
  }

  /** A fenced block's body before its value: whitespace, then an object or an array. */
  private fenceBody(): void {
    let i = this.bodyPos;
    while (i < this.total && WHITESPACE.test(this.at(i))) i++;
    this.bodyPos = i;
    if (i >= this.total) return;
    const c = this.at(i);
    if (c !== "{" && c !== "[") return this.unsure("the fenced block does not start with an object or an array");
    this.begin(i);
  }

  /** After the value closed inside a fenced block: only whitespace, then the block's closing line. */
  private afterValue(): void {
    const fence = this.fence!;
    let i = this.afterPos;
    for (; i < this.total; i++) {
      const c = this.at(i);
      if (c === "\n") {
        fence.valueOnOpenerLine = false;
        this.afterNewline = true;
        continue;
      }
      if (WHITESPACE.test(c)) continue;
      if (c === fence.marker[0]) {
        // On the opener's line, the marker closes a one-line block; on a later line it must start the line
        // (everything since the value was whitespace, so it does when a line ended on the way).
        if (fence.valueOnOpenerLine || this.afterNewline) {
          this.afterPos = i;
          this.fenceClosedAt = i;
          this.phase = "done";
          return;
        }
      }
      return this.broken("the fenced block holds more than the JSON value");
    }
    this.afterPos = i;
  }

  /** Start reading a value at `text[i]` ("{" or "["). */
  private begin(i: number): void {
    this.phase = "reading";
    const tokenizer = new Tokenizer({ emitPartialTokens: true });
    tokenizer.onToken = (token) => this.token(token as Token);
    tokenizer.onError = (error: Error) => {
      throw error;
    };
    this.tokenizer = tokenizer;
    this.feedPos = i;
    this.bytesBefore = 0;
    this.heldSurrogate = "";
    this.feed();
  }

  /** Give the tokenizer everything received that it has not seen. */
  private feed(): void {
    if (this.feedPos >= this.total) return;
    const from = this.feedPos;
    const piece = this.buf.slice(from - this.base);
    const effective = this.heldSurrogate + piece;
    this.writeStart = from - this.heldSurrogate.length;
    this.feedPos = this.total;
    const last = effective.charCodeAt(effective.length - 1);
    const holds = last >= 0xd800 && last <= 0xdbff;
    const encoded = holds ? effective.slice(0, -1) : effective;
    if (hasLoneSurrogate(encoded)) return this.unsure("the answer holds a lone surrogate, which the reader cannot follow");
    this.closedAtByte = -1;
    this.failure = undefined;
    // The tokenizer is given the bytes it would make of `piece` itself (a trailing high surrogate held back
    // for the next piece, as it holds one), so their count is known without encoding twice.
    const bytes = utf8Bytes(encoded);
    try {
      this.tokenizer!.write(bytes);
    } catch (error) {
      if (error !== STOP) this.failure ??= String((error as Error)?.message ?? error);
    }
    if (this.phase !== "reading") return;
    if (this.closedAtByte >= 0) {
      const end = this.writeStart + charAtByte(encoded, this.closedAtByte - this.bytesBefore) + 1;
      this.tokenizer = undefined;
      this.noteLines(piece.slice(0, end - from));
      return this.rootClosed(end);
    }
    if (this.failure !== undefined) return this.notJson(this.failure);
    this.heldSurrogate = holds ? effective.slice(-1) : "";
    this.bytesBefore += bytes.length;
    this.noteLines(piece);
  }

  /** A value that started on a fence's opening line and goes on past it does not make a one-line block. */
  private noteLines(valueText: string): void {
    if (this.fence?.valueOnOpenerLine && valueText.includes("\n")) this.fence.valueOnOpenerLine = false;
  }

  /** The root closed just before `text[end]`. */
  private rootClosed(end: number): void {
    if (this.source === "fence") {
      this.phase = "after";
      this.afterNewline = false;
      this.afterPos = end;
      return;
    }
    this.phase = "done";
  }

  /** The value cannot parse: in prose that only rules out this object; anywhere else the answer is broken. */
  private notJson(why: string): void {
    this.tokenizer = undefined;
    if (this.source !== "prose") return this.broken(`the JSON is not valid: ${why}`);
    this.abandon();
  }

  /** Drop the object being read in prose (it is not JSON); the bracket scan goes on to the next one. */
  private abandon(): void {
    this.tokenizer = undefined;
    this.frames.length = 0;
    this.path.length = 0;
    this.root = undefined;
    this.partialStep = undefined;
    this.closedValues = 0;
    this.phase = "looking";
    this.listener.restarted();
  }

  private unsure(why: string): void {
    this.phase = "unsure";
    this.problem = why;
    this.partialStep = undefined;
    this.tokenizer = undefined;
  }

  private broken(why: string, certain = false): void {
    this.phase = "broken";
    this.problem = why;
    this.certain = certain;
    this.partialStep = undefined;
    this.tokenizer = undefined;
  }

  /** One token of the value: the JSON grammar, with paths, names seen twice and the nesting bound. */
  private token({ token, value, offset, partial }: Token): void {
    const top = this.frames[this.frames.length - 1];
    if (partial) {
      if (token === TokenType.STRING && top && (top.expect === "value" || top.expect === "value-or-close")) {
        this.partialStep = top.array ? top.index : top.key!;
        this.partialText = value as string;
      }
      return;
    }
    this.partialStep = undefined;
    if (top === undefined) {
      if (token !== TokenType.LEFT_BRACE && token !== TokenType.LEFT_BRACKET) throw new Error(`unexpected ${TokenType[token]} after the value`);
      return this.open(token === TokenType.LEFT_BRACKET, undefined);
    }
    switch (top.expect) {
      case "key-or-close":
      case "key": {
        if (token === TokenType.RIGHT_BRACE && top.expect === "key-or-close") return this.close(offset);
        if (token !== TokenType.STRING) throw new Error(`expected a field name, got ${TokenType[token]}`);
        const key = value as string;
        if (top.keys!.has(key)) return this.namedTwice(key);
        top.keys!.add(key);
        top.key = key;
        top.expect = "colon";
        return;
      }
      case "colon":
        if (token !== TokenType.COLON) throw new Error(`expected ":", got ${TokenType[token]}`);
        top.expect = "value";
        return;
      case "value":
      case "value-or-close": {
        if (token === TokenType.RIGHT_BRACKET && top.expect === "value-or-close") return this.close(offset);
        if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) return this.open(token === TokenType.LEFT_BRACKET, top);
        if (token !== TokenType.STRING && token !== TokenType.NUMBER && token !== TokenType.TRUE && token !== TokenType.FALSE && token !== TokenType.NULL) {
          throw new Error(`expected a value, got ${TokenType[token]}`);
        }
        const step = top.array ? top.index : top.key!;
        assign(top, step, value);
        top.expect = "comma-or-close";
        const path = [...this.path, step];
        top.complete.push(pathOf(path));
        if (top.array) top.index++;
        this.closedValues++;
        this.listener.closed(path, value, top.value);
        return;
      }
      case "comma-or-close":
        if (token === TokenType.COMMA) {
          top.expect = top.array ? "value" : "key";
          return;
        }
        if ((token === TokenType.RIGHT_BRACE && !top.array) || (token === TokenType.RIGHT_BRACKET && top.array)) return this.close(offset);
        throw new Error(`expected "," or the end of the ${top.array ? "array" : "object"}, got ${TokenType[token]}`);
    }
  }

  /** A field named twice: the check step refuses such JSON text, in the words used here. */
  private namedTwice(key: string): never {
    const where = pathOf(this.path);
    this.broken(`The JSON names the field ${quote(key, 40)} twice in ${where === "" ? "the top-level object" : where}; each field may appear only once.`);
    throw STOP;
  }

  private open(array: boolean, parent: Frame | undefined): void {
    const value: Record<string, unknown> | unknown[] = array ? [] : {};
    if (parent === undefined) this.root = value;
    else {
      const step = parent.array ? parent.index : parent.key!;
      assign(parent, step, value);
      this.path.push(step);
    }
    this.frames.push({ value, array, expect: array ? "value-or-close" : "key-or-close", keys: array ? undefined : new Set(), index: 0, complete: [] });
    if (this.frames.length > this.limits.maxDepth) {
      // The check step measures a bare answer's nesting before anything else: no later text can change that.
      this.broken(tooDeep(this.limits.maxDepth), this.source === "bare");
      throw STOP;
    }
    this.listener.opened([...this.path], value);
  }

  private close(offset: number): void {
    const frame = this.frames.pop()!;
    const path = [...this.path];
    const parent = this.frames[this.frames.length - 1];
    this.closedValues++;
    if (parent === undefined) {
      this.closedAtByte = offset;
      this.listener.closed(path, frame.value, undefined);
      throw STOP;
    }
    this.path.pop();
    parent.expect = "comma-or-close";
    parent.complete.push(pathOf(path));
    if (parent.array) parent.index++;
    this.listener.closed(path, frame.value, parent.value);
  }
}

/**
 * Whether a line that starts at `i` opens a fenced block, as the extractor's
 * findFences reads it: optional indentation, ``` or ~~~ (three or more), an
 * optional language tag, then the value on this line or the end of the line.
 */
function readOpener(
  text: string,
  i: number,
): "no" | "wait" | { kind: "value" | "next-line"; marker: string; at: number } | { kind: "unsure"; marker: string; at: number } {
  let k = i;
  while (k < text.length && LINE_SPACE.test(text[k])) k++;
  if (k >= text.length) return "wait";
  const c = text[k];
  if (c !== "`" && c !== "~") return "no";
  let run = k;
  while (run < text.length && text[run] === c) run++;
  if (run >= text.length) return "wait";
  if (run - k < 3) return "no";
  const marker = text.slice(k, run);
  k = run;
  while (k < text.length && LINE_SPACE.test(text[k])) k++;
  while (k < text.length && /[\w+.-]/.test(text[k])) k++;
  while (k < text.length && LINE_SPACE.test(text[k])) k++;
  if (k >= text.length) return "wait";
  if (text[k] === "\n") return { kind: "next-line", marker, at: k + 1 };
  if (text[k] === "{" || text[k] === "[") return { kind: "value", marker, at: k };
  return { kind: "unsure", marker, at: k };
}

function tooDeep(maxDepth: number): string {
  return `The JSON nests deeper than ${maxDepth} levels; the expected object is shallow.`;
}

/** Store a member as JSON.parse does: "__proto__" as an ordinary own field. */
function assign(frame: Frame, step: Step, value: unknown): void {
  if (frame.array) (frame.value as unknown[]).push(value);
  else if (step === "__proto__") Object.defineProperty(frame.value, step, { value, writable: true, enumerable: true, configurable: true });
  else (frame.value as Record<string, unknown>)[step as string] = value;
}

const UTF8 = new TextEncoder();

/**
 * `text` in UTF-8, as TextEncoder writes it: ASCII (most of a JSON answer) is
 * copied here, byte for byte, since TextEncoder's call costs more than the
 * copy for a piece of a few characters; anything else goes to TextEncoder.
 */
function utf8Bytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return UTF8.encode(text);
    out[i] = c;
  }
  return out;
}

/** The index of the character of `text` that holds byte `byte` of its UTF-8 form. */
function charAtByte(text: string, byte: number): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const size = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (byte < bytes + size) return i;
    bytes += size;
    if (pair) i++;
  }
  return text.length;
}

/** Whether `text` holds a surrogate without its pair (TextEncoder would write U+FFFD where JSON.parse keeps it). */
function hasLoneSurrogate(text: string): boolean {
  if (!/[\ud800-\udfff]/.test(text)) return false;
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

/** A copy of JSON data ("__proto__" kept as an ordinary own field). */
function copyJson(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = copyJson((value as Record<string, unknown>)[key]);
    if (key === "__proto__") Object.defineProperty(out, key, { value: v, writable: true, enumerable: true, configurable: true });
    else out[key] = v;
  }
  return out;
}

function setAt(root: unknown, path: readonly Step[], value: unknown): void {
  let node = root as Record<string, unknown> | unknown[];
  for (let k = 0; k < path.length - 1; k++) node = (node as Record<string, unknown>)[path[k] as string] as Record<string, unknown>;
  const last = path[path.length - 1];
  if (Array.isArray(node)) node[last as number] = value;
  else if (last === "__proto__") Object.defineProperty(node, last, { value, writable: true, enumerable: true, configurable: true });
  else node[last as string] = value;
}
