/**
 * The code points of a class escape (`.`, `\s`, `\d`, `\w` and their negations) and of a Unicode property
 * escape (`\p{…}`, `\P{…}`), as this JavaScript engine's RegExp gives them (Unicode version included), for
 * the translation of patterns to RE2 (regex.ts).
 *
 * Asking the engine costs a pass over every code point (tens of milliseconds), so each table is made at
 * most once per process and shared by every spelling of it: `\p{L}`, `\p{Letter}`, `\p{gc=L}` and
 * `\p{General_Category=Letter}` are one table, and one pass makes all thirty General_Category values at
 * once (the larger categories are unions of them). Binary properties (`\p{Alphabetic}`, `\p{Alpha}`) are
 * one table per property, and so is each Script and Script_Extensions value (`\p{sc=Grek}` and
 * `\p{Script=Greek}` are asked of the engine apart: their aliases are not listed here). Every table is
 * kept: the engine accepts a fixed, finite set of properties, and only a spelling it accepted gets here,
 * so the tables are bounded by that set. A run-time spec names at most MAX_PROPERTY_TABLES tables that
 * are not General_Category (limits.ts), so no spec can make the process ask for more than a few.
 */

export type Ranges = ReadonlyArray<readonly [number, number]>;

const MAX_CODE_POINT = 0x10ffff;

/** The thirty General_Category values every code point has exactly one of. */
const GC_LEAVES = "Cc Cf Cn Co Cs Ll Lm Lo Lt Lu Mc Me Mn Nd Nl No Pc Pd Pe Pf Pi Po Ps Sc Sk Sm So Zl Zp Zs".split(" ");

/** Every spelling of a General_Category value (Unicode's PropertyValueAliases, which ECMA-262 adopts), by its short name. */
const GC_ALIASES: Record<string, string[]> = {
  C: ["Other"],
  Cc: ["Control", "cntrl"],
  Cf: ["Format"],
  Cn: ["Unassigned"],
  Co: ["Private_Use"],
  Cs: ["Surrogate"],
  L: ["Letter"],
  LC: ["Cased_Letter"],
  Ll: ["Lowercase_Letter"],
  Lm: ["Modifier_Letter"],
  Lo: ["Other_Letter"],
  Lt: ["Titlecase_Letter"],
  Lu: ["Uppercase_Letter"],
  M: ["Mark", "Combining_Mark"],
  Mc: ["Spacing_Mark"],
  Me: ["Enclosing_Mark"],
  Mn: ["Nonspacing_Mark"],
  N: ["Number"],
  Nd: ["Decimal_Number", "digit"],
  Nl: ["Letter_Number"],
  No: ["Other_Number"],
  P: ["Punctuation", "punct"],
  Pc: ["Connector_Punctuation"],
  Pd: ["Dash_Punctuation"],
  Pe: ["Close_Punctuation"],
  Pf: ["Final_Punctuation"],
  Pi: ["Initial_Punctuation"],
  Po: ["Other_Punctuation"],
  Ps: ["Open_Punctuation"],
  S: ["Symbol"],
  Sc: ["Currency_Symbol"],
  Sk: ["Modifier_Symbol"],
  Sm: ["Math_Symbol"],
  So: ["Other_Symbol"],
  Z: ["Separator"],
  Zl: ["Line_Separator"],
  Zp: ["Paragraph_Separator"],
  Zs: ["Space_Separator"],
};

/** The binary properties ECMA-262 lists, each with its short alias where it has one. */
const BINARY_ALIASES: Record<string, string[]> = {
  ASCII: [],
  ASCII_Hex_Digit: ["AHex"],
  Alphabetic: ["Alpha"],
  Any: [],
  Assigned: [],
  Bidi_Control: ["Bidi_C"],
  Bidi_Mirrored: ["Bidi_M"],
  Case_Ignorable: ["CI"],
  Cased: [],
  Changes_When_Casefolded: ["CWCF"],
  Changes_When_Casemapped: ["CWCM"],
  Changes_When_Lowercased: ["CWL"],
  Changes_When_NFKC_Casefolded: ["CWKCF"],
  Changes_When_Titlecased: ["CWT"],
  Changes_When_Uppercased: ["CWU"],
  Dash: [],
  Default_Ignorable_Code_Point: ["DI"],
  Deprecated: ["Dep"],
  Diacritic: ["Dia"],
  Emoji: [],
  Emoji_Component: ["EComp"],
  Emoji_Modifier: ["EMod"],
  Emoji_Modifier_Base: ["EBase"],
  Emoji_Presentation: ["EPres"],
  Extended_Pictographic: ["ExtPict"],
  Extender: ["Ext"],
  Grapheme_Base: ["Gr_Base"],
  Grapheme_Extend: ["Gr_Ext"],
  Hex_Digit: ["Hex"],
  IDS_Binary_Operator: ["IDSB"],
  IDS_Trinary_Operator: ["IDST"],
  ID_Continue: ["IDC"],
  ID_Start: ["IDS"],
  Ideographic: ["Ideo"],
  Join_Control: ["Join_C"],
  Logical_Order_Exception: ["LOE"],
  Lowercase: ["Lower"],
  Math: [],
  Noncharacter_Code_Point: ["NChar"],
  Pattern_Syntax: ["Pat_Syn"],
  Pattern_White_Space: ["Pat_WS"],
  Quotation_Mark: ["QMark"],
  Radical: [],
  Regional_Indicator: ["RI"],
  Sentence_Terminal: ["STerm"],
  Soft_Dotted: ["SD"],
  Terminal_Punctuation: ["Term"],
  Unified_Ideograph: ["UIdeo"],
  Uppercase: ["Upper"],
  Variation_Selector: ["VS"],
  White_Space: ["space"],
  XID_Continue: ["XIDC"],
  XID_Start: ["XIDS"],
};

const canonicalOf = (aliases: Record<string, string[]>) =>
  new Map(Object.entries(aliases).flatMap(([name, others]) => [name, ...others].map((a) => [a, name])));
const GC_NAMES = canonicalOf(GC_ALIASES);
const BINARY_NAMES = canonicalOf(BINARY_ALIASES);
const PROPERTY_NAMES = canonicalOf({ General_Category: ["gc"], Script: ["sc"], Script_Extensions: ["scx"] });
/** The General_Category values that unite others. */
const GC_UNIONS: Record<string, string[]> = {
  C: ["Cc", "Cf", "Cn", "Co", "Cs"],
  L: ["Ll", "Lm", "Lo", "Lt", "Lu"],
  LC: ["Ll", "Lt", "Lu"],
  M: ["Mc", "Me", "Mn"],
  N: ["Nd", "Nl", "No"],
  P: ["Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps"],
  S: ["Sc", "Sk", "Sm", "So"],
  Z: ["Zl", "Zp", "Zs"],
};

/**
 * The table a `\p{…}` body names, as one key per table: `gc=Lu`, `bin=Alphabetic`, `sc=Greek`,
 * `scx=Grek`. The body must be one the engine accepts (the pattern's syntax was checked).
 */
function propertyKey(body: string): string {
  const eq = body.indexOf("=");
  if (eq < 0) {
    const gc = GC_NAMES.get(body);
    return gc !== undefined ? `gc=${gc}` : `bin=${BINARY_NAMES.get(body) ?? body}`;
  }
  const name = PROPERTY_NAMES.get(body.slice(0, eq)) ?? body.slice(0, eq);
  const value = body.slice(eq + 1);
  if (name === "General_Category") return `gc=${GC_NAMES.get(value) ?? value}`;
  return `${name === "Script" ? "sc" : "scx"}=${value}`;
}

/** Whether a table key is a General_Category one, which one pass makes for every value at once. */
export const isGeneralCategory = (key: string) => key.startsWith("gc=");

/**
 * The most tables other than General_Category's that one run-time spec's patterns may name (limits.ts):
 * each costs a pass over every code point the first time, and General_Category's take one pass for all.
 */
export const MAX_PROPERTY_TABLES = 4;

const tables = new Map<string, Ranges>();
const complements = new Map<Ranges, Ranges>();

/** The code points of `\p{body}` (or of `\P{body}` when `negated`): one shared, frozen table per property. */
export function unicodePropertyRanges(body: string, negated: boolean): Ranges {
  const key = propertyKey(body);
  let ranges = tables.get(key);
  if (ranges === undefined) {
    ranges = Object.freeze(makeTable(key));
    tables.set(key, ranges);
  }
  return negated ? complementOf(ranges) : ranges;
}

function makeTable(key: string): Array<[number, number]> {
  const eq = key.indexOf("=");
  const kind = key.slice(0, eq);
  const value = key.slice(eq + 1);
  if (kind === "gc") {
    if (!tables.has("gc=Lu")) makeGeneralCategories();
    const leaves = GC_UNIONS[value] ?? [value];
    if (leaves.every((leaf) => tables.has(`gc=${leaf}`))) return union(leaves.flatMap((leaf) => [...tables.get(`gc=${leaf}`)!]));
    return scan(`\\p{General_Category=${value}}`);
  }
  return scan(`\\p{${kind === "bin" ? "" : kind === "sc" ? "Script=" : "Script_Extensions="}${value}}`);
}

/** ECMA-262's line terminators, which `.` does not match. */
const LINE_TERMINATORS: Ranges = [
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
];
/** `\d` and `\w`, ASCII-only in ECMA-262 without the `i` flag; `.`, `\D`, `\W` and `\S` are complements. */
const FIXED: Record<string, Ranges> = {
  "\\d": [[0x30, 0x39]],
  "\\w": [
    [0x30, 0x39],
    [0x41, 0x5a],
    [0x5f, 0x5f],
    [0x61, 0x7a],
  ],
};

/** The code points of `.` or `\d \D \w \W \s \S`, one shared table each (`\s` asked of the engine, whose Unicode says which spaces it has). */
export function classEscapeRanges(escape: string): Ranges {
  if (escape === ".") return complementOf(LINE_TERMINATORS);
  const lower = escape.toLowerCase();
  let ranges = FIXED[lower] ?? tables.get(lower);
  if (ranges === undefined) {
    ranges = Object.freeze(scan(lower));
    tables.set(lower, ranges);
  }
  return escape === lower ? ranges : complementOf(ranges);
}

/** The code points a table does not hold, made once per table. */
function complementOf(ranges: Ranges): Ranges {
  let out = complements.get(ranges);
  if (out === undefined) {
    const made: Array<[number, number]> = [];
    let next = 0;
    for (const [a, b] of ranges) {
      if (a > next) made.push([next, a - 1]);
      next = b + 1;
    }
    if (next <= MAX_CODE_POINT) made.push([next, MAX_CODE_POINT]);
    out = Object.freeze(made);
    complements.set(ranges, out);
  }
  return out;
}

/** The tables the `\p{…}` escapes of a valid ECMA-262 pattern name (see propertyKey), read without translating it. */
export function propertyKeysOf(pattern: string): string[] {
  const keys: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== "\\") continue;
    const c = pattern[i + 1];
    const close = pattern.indexOf("}", i);
    if ((c === "p" || c === "P") && pattern[i + 2] === "{" && close > 0) {
      keys.push(propertyKey(pattern.slice(i + 3, close)));
      i = close;
    } else i++; // the escaped character
  }
  return keys;
}

/** The union of ranges, sorted and merged. */
export function union(ranges: Array<readonly [number, number]>): Array<[number, number]> {
  ranges.sort((x, y) => x[0] - y[0]);
  const out: Array<[number, number]> = [];
  for (const [a, b] of ranges) {
    const last = out[out.length - 1];
    if (last !== undefined && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Asking the engine: a text of every code point but the surrogates, read in runs by a RegExp.

/** The code point at index `i` of the text of every code point (surrogates left out, astral ones two units long). */
const codePointAt = (i: number) => (i < 0xd800 ? i : i < 0xf800 ? i + 0x800 : 0x10000 + ((i - 0xf800) >> 1));

/** Every code point but the surrogates, in order: made for a pass and dropped after it (4 MB). */
function everyCodePoint(): string {
  const units = new Uint16Array(0xd800 + 0x2000 + 2 * 0x100000);
  let i = 0;
  for (let cp = 0; cp < 0x10000; cp++) if (cp < 0xd800 || cp > 0xdfff) units[i++] = cp;
  for (let v = 0; v < 0x100000; v++) {
    units[i++] = 0xd800 + (v >> 10);
    units[i++] = 0xdc00 + (v & 0x3ff);
  }
  return new TextDecoder("utf-16le").decode(units);
}

/** The code points a match covers in the text of every code point: one run, or two where it spans the surrogates' place. */
function runOf(m: RegExpMatchArray): Array<[number, number]> {
  const first = codePointAt(m.index!);
  const last = codePointAt(m.index! + m[0].length - 1); // an astral code point's last unit maps to it too
  return first < 0xd800 && last >= 0xe000
    ? [
        [first, 0xd7ff],
        [0xe000, last],
      ]
    : [[first, last]];
}

/** The runs of code points the RegExp's matches cover in the text, and the lone surrogates `single` matches. */
function runsOf(matches: Iterable<RegExpMatchArray>, single: RegExp): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const m of matches) out.push(...runOf(m));
  for (let u = 0xd800; u <= 0xdfff; u++) if (single.test(String.fromCharCode(u))) out.push([u, u]);
  return union(out);
}

/** The code points an escape matches, asked of this engine's RegExp in one pass. */
function scan(escape: string): Array<[number, number]> {
  return runsOf(everyCodePoint().matchAll(new RegExp(`${escape}+`, "gu")), new RegExp(`^${escape}$`, "u"));
}

/** Every General_Category leaf in one pass: an alternation of the leaves, each match a run of one of them. */
function makeGeneralCategories(): void {
  const text = everyCodePoint();
  const found = new Map<string, Array<[number, number]>>(GC_LEAVES.map((leaf) => [leaf, []]));
  for (const m of text.matchAll(new RegExp(GC_LEAVES.map((leaf) => `(\\p{gc=${leaf}}+)`).join("|"), "gu"))) {
    const leaf = GC_LEAVES[m.findIndex((group, i) => i > 0 && group !== undefined) - 1];
    found.get(leaf)!.push(...runOf(m));
  }
  found.get("Cs")!.push([0xd800, 0xdfff]); // every surrogate is Cs
  for (const [leaf, runs] of found) tables.set(`gc=${leaf}`, Object.freeze(union(runs)));
}
