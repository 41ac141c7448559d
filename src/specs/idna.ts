/**
 * IDNA2008 host names (RFC 5890-5893), judged as they are written: JSON Schema's `idn-hostname` names RFC 5890,
 * so a label is valid only if it already is an IDNA2008 label (an LDH label, an A-label, or a U-label), never
 * because a mapping (UTS #46: case folding, width folding, dropping default ignorables) would make one of it.
 * `Ä.com`, `ａ.com` and `a\u200Bb.com` are not host names; `ä.com` is.
 *
 * RFC 5892's derived property is computed here by its own algorithm (section 3) from the Unicode data Node
 * ships (general categories and binary properties through RegExp property escapes, NFKC through
 * `String.prototype.normalize`, the virama class through canonical ordering): no table to keep in step with
 * Node's Unicode version. Two inputs of the contextual rules have no such source, Bidi_Class (RFC 5893) and
 * Joining_Type (RFC 5892 A.1): they come from the table idn-hostname ships (Unicode 15.1). A name holding a
 * code point that table does not know (one added to Unicode later) cannot be judged by the Bidi rule and is
 * refused.
 */
import idnaTable from "idn-hostname/idnaMappingTableCompact.json" with { type: "json" };

/** RFC 5892's derived property values. */
export type IdnaProperty = "PVALID" | "CONTEXTJ" | "CONTEXTO" | "DISALLOWED" | "UNASSIGNED";

/** RFC 5892 2.6 (F): the code points whose value the algorithm does not derive. */
const EXCEPTIONS: ReadonlyMap<number, IdnaProperty> = new Map<number, IdnaProperty>([
  ...[0x00df, 0x03c2, 0x06fd, 0x06fe, 0x0f0b, 0x3007].map((cp) => [cp, "PVALID"] as const),
  ...[0x00b7, 0x0375, 0x05f3, 0x05f4, 0x30fb, ...range(0x0660, 0x0669), ...range(0x06f0, 0x06f9)].map((cp) => [cp, "CONTEXTO"] as const),
  ...[0x0640, 0x07fa, 0x302e, 0x302f, ...range(0x3031, 0x3035), 0x303b].map((cp) => [cp, "DISALLOWED"] as const),
]);

/** RFC 5892 2.7 (G): BackwardCompatible, empty in RFC 5892 and in every update of it so far (RFC 6452, RFC 8753). */
const BACKWARD_COMPATIBLE: ReadonlyMap<number, IdnaProperty> = new Map();

function range(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

const UNASSIGNED = /^\p{Cn}$/u; // (J), less the noncharacters (tested apart)
const NONCHARACTER = /^\p{Noncharacter_Code_Point}$/u;
const LDH = /^[-0-9a-z]$/; // (E)
const JOIN_CONTROL = /^\p{Join_Control}$/u; // (H)
const CHANGES_WHEN_CASEFOLDED = /^\p{Changes_When_Casefolded}$/u;
const IGNORABLE_PROPERTIES = /^[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Noncharacter_Code_Point}]$/u; // (C)
/** (D): Combining Diacritical Marks for Symbols, Musical Symbols, Ancient Greek Musical Notation (Blocks.txt). */
const IGNORABLE_BLOCKS = /^[\u20D0-\u20FF\u{1D100}-\u{1D1FF}\u{1D200}-\u{1D24F}]$/u;
/** (I): Hangul_Syllable_Type L, V or T (HangulSyllableType.txt; RegExp has no escape for this property). */
const OLD_HANGUL_JAMO = /^[\u1100-\u11FF\uA960-\uA97C\uD7B0-\uD7C6\uD7CB-\uD7FB]$/u;
const LETTER_DIGITS = /^[\p{Ll}\p{Lu}\p{Lo}\p{Nd}\p{Lm}\p{Mn}\p{Mc}]$/u; // (A)

/**
 * (B) Unstable: toNFKC(toCaseFold(toNFKC(cp))) != cp. A code point NFKC changes is unstable; one NFKC keeps is
 * unstable exactly when case folding changes it (a folded form is never NFKC-equivalent to the original).
 */
function unstable(char: string): boolean {
  return char.normalize("NFKC") !== char || CHANGES_WHEN_CASEFOLDED.test(char);
}

/** RFC 5892 section 3: the derived property value of one code point, in the RFC's order. */
function derive(cp: number): IdnaProperty {
  const char = String.fromCodePoint(cp);
  const exception = EXCEPTIONS.get(cp) ?? BACKWARD_COMPATIBLE.get(cp);
  if (exception !== undefined) return exception;
  if (UNASSIGNED.test(char) && !NONCHARACTER.test(char)) return "UNASSIGNED";
  if (LDH.test(char)) return "PVALID";
  if (JOIN_CONTROL.test(char)) return "CONTEXTJ";
  if (unstable(char) || IGNORABLE_PROPERTIES.test(char) || IGNORABLE_BLOCKS.test(char) || OLD_HANGUL_JAMO.test(char)) return "DISALLOWED";
  return LETTER_DIGITS.test(char) ? "PVALID" : "DISALLOWED";
}

const PROPERTY_VALUES: readonly IdnaProperty[] = ["PVALID", "CONTEXTJ", "CONTEXTO", "DISALLOWED", "UNASSIGNED"];
/** Each code point's value once derived (1 + its index in PROPERTY_VALUES; 0 until then): 1.1 MB, once per process. */
let derived: Uint8Array | undefined;

/** The derived property value of a code point (RFC 5892), derived the first time it is asked for. */
export function idnaProperty(cp: number): IdnaProperty {
  derived ??= new Uint8Array(0x110000);
  if (derived[cp] === 0) derived[cp] = 1 + PROPERTY_VALUES.indexOf(derive(cp));
  return PROPERTY_VALUES[derived[cp] - 1];
}

type Ranges = ReadonlyArray<readonly [number, number, string]>;

/** The value a range table gives a code point, or undefined where it lists none. */
function lookUp(ranges: Ranges, cp: number): string | undefined {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const [first, last, value] = ranges[mid];
    if (cp < first) high = mid - 1;
    else if (cp > last) low = mid + 1;
    else return value;
  }
  return undefined;
}

const BIDI_CLASSES = idnaTable.bidi_ranges as unknown as Ranges;
const JOINING_TYPES = idnaTable.joining_type_ranges as unknown as Ranges;
const TRANSPARENT = /^[\p{Mn}\p{Me}\p{Cf}]$/u;

/**
 * Joining_Type: the table's value, else U. The table lists every T, D, R, L and C it knows; U for a code point
 * it does not know (one added to Unicode later), or for a T that Node's Unicode no longer makes a mark or a
 * format character (U+1171E became a spacing mark), makes the rule refuse a ZWNJ beside it rather than allow it.
 */
function joiningType(cp: number): string {
  const type = lookUp(JOINING_TYPES, cp) ?? "U";
  return type === "T" && !TRANSPARENT.test(String.fromCodePoint(cp)) ? "U" : type;
}

/**
 * Canonical_Combining_Class = Virama (9), read from canonical ordering: NFD moves a mark of class 9 after
 * U+3099 (class 8) and before U+05B0 (class 10), and no other code point both ways.
 */
function isVirama(cp: number): boolean {
  const mark = String.fromCodePoint(cp);
  if (cp === 0x3099 || cp === 0x05b0 || mark.normalize("NFD") !== mark) return false;
  return `${mark}\u3099`.normalize("NFD") === `\u3099${mark}` && `\u05B0${mark}`.normalize("NFD") === `${mark}\u05B0`;
}

const ZWNJ = 0x200c;
const SCRIPT = { greek: /^\p{sc=Greek}$/u, hebrew: /^\p{sc=Hebrew}$/u, kanaOrHan: /^[\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Han}]$/u };
const isIn = (script: RegExp, cp: number | undefined) => cp !== undefined && script.test(String.fromCodePoint(cp));

/** RFC 5892 Appendix A: whether the CONTEXTJ or CONTEXTO code point at `at` may stand where it is. */
function contextAllows(cps: readonly number[], at: number): boolean {
  const cp = cps[at];
  const before = cps[at - 1];
  const after = cps[at + 1];
  if (cp === ZWNJ || cp === 0x200d) {
    if (before !== undefined && isVirama(before)) return true; // A.1, A.2
    if (cp !== ZWNJ) return false;
    // A.1: (Joining_Type:{L,D})(Joining_Type:T)*\u200C(Joining_Type:T)*(Joining_Type:{R,D})
    let i = at - 1;
    while (i >= 0 && joiningType(cps[i]) === "T") i--;
    let j = at + 1;
    while (j < cps.length && joiningType(cps[j]) === "T") j++;
    return i >= 0 && /^[LD]$/.test(joiningType(cps[i])) && j < cps.length && /^[RD]$/.test(joiningType(cps[j]));
  }
  if (cp === 0x00b7) return before === 0x6c && after === 0x6c; // A.3 MIDDLE DOT
  if (cp === 0x0375) return isIn(SCRIPT.greek, after); // A.4 GREEK LOWER NUMERAL SIGN (KERAIA)
  if (cp === 0x05f3 || cp === 0x05f4) return isIn(SCRIPT.hebrew, before); // A.5, A.6 HEBREW GERESH, GERSHAYIM
  if (cp === 0x30fb) return cps.some((c) => isIn(SCRIPT.kanaOrHan, c)); // A.7 KATAKANA MIDDLE DOT
  if (cp >= 0x0660 && cp <= 0x0669) return !cps.some((c) => c >= 0x06f0 && c <= 0x06f9); // A.8 ARABIC-INDIC DIGITS
  if (cp >= 0x06f0 && cp <= 0x06f9) return !cps.some((c) => c >= 0x0660 && c <= 0x0669); // A.9 EXTENDED ARABIC-INDIC DIGITS
  return false; // a contextual code point without a rule is not allowed (RFC 5891 5.4)
}

const COMBINING_MARK = /^\p{M}$/u;

/** RFC 5891 5.4 (with 4.2.3): whether these code points form a U-label. */
function isULabel(cps: readonly number[]): boolean {
  const label = String.fromCodePoint(...cps);
  if (label.normalize("NFC") !== label) return false; // 4.2.1
  if (cps[0] === 0x2d || cps.at(-1) === 0x2d || (cps[2] === 0x2d && cps[3] === 0x2d)) return false; // 4.2.3.1
  if (COMBINING_MARK.test(String.fromCodePoint(cps[0]))) return false; // 4.2.3.2
  return cps.every((cp, at) => {
    const property = idnaProperty(cp);
    return property === "PVALID" || ((property === "CONTEXTJ" || property === "CONTEXTO") && contextAllows(cps, at));
  });
}

const LDH_LABEL = /^[A-Za-z0-9](?:[-A-Za-z0-9]{0,61}[A-Za-z0-9])?$/;
const ASCII = /^[\x00-\x7F]*$/;
/** A U-label of more code points has an A-label longer than 63 octets ("xn--", then one or more per code point). */
const MAX_U_LABEL_CODE_POINTS = 59;

/** A label as IDNA2008 reads it (an A-label's U-label), and the octets of its ASCII form; or undefined when it is no valid label. */
function readLabel(label: string): { text: string; octets: number } | undefined {
  if (ASCII.test(label)) {
    if (label.length > 63) return undefined;
    if (/^xn--/i.test(label)) {
      // An A-label: its Punycode decodes to a U-label and that U-label encodes back to it exactly (RFC 5891 5.4).
      const encoded = label.slice(4).toLowerCase();
      const cps = punycodeDecode(encoded);
      if (cps === undefined || cps.every((cp) => cp < 0x80) || punycodeEncode(cps) !== encoded || !isULabel(cps)) return undefined;
      return { text: String.fromCodePoint(...cps), octets: label.length };
    }
    // An NR-LDH label: letters (of either case), digits and hyphens, no "--" in positions 3-4 (reserved).
    if (!LDH_LABEL.test(label) || label.slice(2, 4) === "--") return undefined;
    return { text: label, octets: label.length };
  }
  const cps = Array.from(label, (c) => c.codePointAt(0)!);
  if (cps.length > MAX_U_LABEL_CODE_POINTS || !isULabel(cps)) return undefined;
  return { text: label, octets: 4 + punycodeEncode(cps).length };
}

const RTL_CLASSES = /^(?:R|AL|AN)$/;

/** RFC 5893 section 2: the six conditions of the Bidi rule, for one label of a Bidi domain name. */
function satisfiesBidiRule(classes: readonly string[]): boolean {
  const last = classes.findLast((c) => c !== "NSM");
  if (classes[0] === "R" || classes[0] === "AL") {
    return (
      classes.every((c) => /^(?:R|AL|AN|EN|ES|CS|ET|ON|BN|NSM)$/.test(c)) &&
      last !== undefined &&
      /^(?:R|AL|EN|AN)$/.test(last) &&
      !(classes.includes("EN") && classes.includes("AN"))
    );
  }
  if (classes[0] === "L") return classes.every((c) => /^(?:L|EN|ES|CS|ET|ON|BN|NSM)$/.test(c)) && (last === "L" || last === "EN");
  return false;
}

/** The label separators RFC 3490 3.1 names (full stop, ideographic, fullwidth and halfwidth ideographic full stops). */
const SEPARATORS = /[.\u3002\uFF0E\uFF61]/;
const MAX_NAME_OCTETS = 253;

/** Whether a string is an IDNA2008 host name (RFC 5890-5893), written as one: no empty label, no trailing root dot. */
export function isIdnHostname(name: string): boolean {
  const labels: string[] = [];
  let octets = -1;
  for (const label of name.split(SEPARATORS)) {
    const read = readLabel(label);
    if (read === undefined) return false;
    labels.push(read.text);
    octets += read.octets + 1;
    if (octets > MAX_NAME_OCTETS) return false;
  }
  if (labels.every((label) => ASCII.test(label))) return true; // no right-to-left label
  const classes = labels.map((label) => Array.from(label, (c) => lookUp(BIDI_CLASSES, c.codePointAt(0)!)));
  if (classes.some((label) => label.includes(undefined))) return false; // a code point the Bidi table does not know: not judged, refused
  const known = classes as string[][];
  const bidiName = known.some((label) => label.some((c) => RTL_CLASSES.test(c)));
  return !bidiName || known.every(satisfiesBidiRule);
}

// RFC 3492 Punycode, for labels of at most 63 octets.
const BASE = 36;
const T_MIN = 1;
const T_MAX = 26;

function adapt(delta: number, points: number, first: boolean): number {
  let d = first ? Math.floor(delta / 700) : delta >> 1;
  d += Math.floor(d / points);
  let k = 0;
  for (; d > ((BASE - T_MIN) * T_MAX) >> 1; k += BASE) d = Math.floor(d / (BASE - T_MIN));
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + 38));
}

const threshold = (k: number, bias: number) => (k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias);
const digitOf = (code: number) => (code >= 0x61 && code <= 0x7a ? code - 0x61 : code >= 0x30 && code <= 0x39 ? code - 22 : -1);
const digitChar = (digit: number) => String.fromCharCode(digit < 26 ? 0x61 + digit : digit + 22);

/** RFC 3492 6.2, for lower-case input: the code points, or undefined when the input is not Punycode. */
function punycodeDecode(input: string): number[] | undefined {
  const delimiter = input.lastIndexOf("-");
  const output = delimiter > 0 ? Array.from(input.slice(0, delimiter), (c) => c.charCodeAt(0)) : [];
  let n = 0x80;
  let i = 0;
  let bias = 72;
  for (let at = delimiter > 0 ? delimiter + 1 : 0; at < input.length;) {
    const start = i;
    for (let w = 1, k = BASE; ; k += BASE) {
      if (at >= input.length) return undefined;
      const digit = digitOf(input.charCodeAt(at++));
      if (digit < 0) return undefined;
      i += digit * w;
      if (i >= 0x110000 * (output.length + 1)) return undefined; // the code point would be past U+10FFFF
      const t = threshold(k, bias);
      if (digit < t) break;
      w *= BASE - t;
    }
    bias = adapt(i - start, output.length + 1, start === 0);
    n += Math.floor(i / (output.length + 1));
    i %= output.length + 1;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
    output.splice(i++, 0, n);
  }
  return output;
}

/** RFC 3492 6.3: the Punycode of these code points. */
function punycodeEncode(cps: readonly number[]): string {
  let output = cps
    .filter((cp) => cp < 0x80)
    .map((cp) => String.fromCharCode(cp))
    .join("");
  const basic = output.length;
  if (basic > 0) output += "-";
  let n = 0x80;
  let delta = 0;
  let bias = 72;
  for (let handled = basic; handled < cps.length; delta++, n++) {
    const m = Math.min(...cps.filter((cp) => cp >= n));
    delta += (m - n) * (handled + 1);
    n = m;
    for (const cp of cps) {
      if (cp < n) delta++;
      if (cp !== n) continue;
      let q = delta;
      for (let k = BASE; ; k += BASE) {
        const t = threshold(k, bias);
        if (q < t) break;
        output += digitChar(t + ((q - t) % (BASE - t)));
        q = Math.floor((q - t) / (BASE - t));
      }
      output += digitChar(q);
      bias = adapt(delta, handled + 1, handled === basic);
      delta = 0;
      handled++;
    }
  }
  return output;
}
