/**
 * Reading the numeric score out of an evaluator's free-text evaluation.
 *
 * The score is the last number that follows the phrase "final score" or
 * "overall score" (case-insensitive), normalised to the 0..1 range:
 *
 *   - `N/D` or `N out of D` (D > 0)  -> N / D        ("8/10" -> 0.8, "85/100" -> 0.85)
 *   - a bare number N                -> N / 10       ("8" -> 0.8, "7.5" -> 0.75)
 *
 * A bare number is always divided by 10, even when it looks like it is already
 * on the 0..1 scale ("0.85" -> 0.085): the evaluator is asked for a score out
 * of 10, and guessing the scale from the magnitude would make "1" ambiguous.
 *
 * The result is clamped into [0, 1]. When no score can be read the result is
 * `DEFAULT_SCORE` with `found: false`.
 *
 * Parsing is a single left-to-right pass with bounded look-ahead per phrase
 * occurrence, so it runs in linear time on arbitrarily large inputs.
 */

/** Score used when the evaluation contains no readable final/overall score. */
export const DEFAULT_SCORE = 0.5;

interface ParsedScore {
  /** The score in [0, 1]; `DEFAULT_SCORE` when `found` is false. */
  score: number;
  /** Whether a final/overall score was actually read from the text. */
  found: boolean;
}

/**
 * "final score" / "overall score" as a phrase: not preceded by a letter or
 * digit (so "semifinal score" does not count), 1-3 whitespace characters
 * between the two words, and "score" not continued by another letter
 * ("final scores", "overall scoring" do not count). Every part of the pattern
 * is bounded, so matching is linear in the input length.
 */
const PHRASE = /(?<![\p{L}\p{N}])(?:final|overall)\s{1,3}score(?!\p{L})/giu;

/** Maximum number of characters allowed between the phrase and the number. */
const MAX_GAP = 20;

/** Maximum number of spaces/emphasis characters around a denominator's "/". */
const MAX_DENOMINATOR_PADDING = 6;

/** Words that may appear between the phrase and the number ("final score is 8", "overall score of 7"). */
const GAP_WORDS = ["is", "of", "was"] as const;

const isDigit = (c: number): boolean => c >= 48 && c <= 57; // 0-9

const isAsciiLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** Whitespace or markdown emphasis: allowed in the gap, but not a separator. */
const isFiller = (c: number): boolean =>
  c === 32 || // space
  c === 9 || // tab
  c === 10 || // \n
  c === 13 || // \r
  c === 0xa0 || // no-break space
  c === 42 || // *
  c === 95; // _

/** Punctuation that separates the phrase from the number. */
const isSeparator = (c: number): boolean =>
  c === 58 || // :
  c === 61 || // =
  c === 45 || // -
  c === 0x2013 || // en dash
  c === 0x2014 || // em dash
  c === 0x2212; // minus sign

const isMinus = (c: number): boolean => c === 45 || c === 0x2212;

/** Case-insensitive ASCII word match at `i`, delimited by non-letters on both sides. */
function wordAt(text: string, i: number, word: string): boolean {
  if (i + word.length > text.length) return false;
  if (i > 0 && isAsciiLetter(text.charCodeAt(i - 1))) return false;
  for (let j = 0; j < word.length; j++) {
    if ((text.charCodeAt(i + j) | 0x20) !== word.charCodeAt(j)) return false;
  }
  return !(i + word.length < text.length && isAsciiLetter(text.charCodeAt(i + word.length)));
}

interface NumberToken {
  value: number;
  end: number;
}

/** Reads an unsigned decimal number (`12`, `7.5`, `.85`, `8.`) at `i`. */
function readUnsigned(text: string, i: number): NumberToken | null {
  const start = i;
  while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  const intDigits = i - start;
  if (i < text.length && text.charCodeAt(i) === 46 /* . */ && i + 1 < text.length && isDigit(text.charCodeAt(i + 1))) {
    i++;
    while (i < text.length && isDigit(text.charCodeAt(i))) i++;
  } else if (intDigits === 0) {
    return null;
  }
  return { value: Number(text.slice(start, i)), end: i };
}

/** Skips up to `max` filler characters (spaces, `*`, `_`). */
function skipFiller(text: string, i: number, max: number): number {
  const limit = Math.min(text.length, i + max);
  while (i < limit && isFiller(text.charCodeAt(i))) i++;
  return i;
}

/** Reads an optional denominator after a number: "/10", " / 100", " out of 10" (emphasis allowed around "/"). */
function readDenominator(text: string, i: number): number | null {
  let j = skipFiller(text, i, MAX_DENOMINATOR_PADDING);
  if (j < text.length && text.charCodeAt(j) === 47 /* / */) {
    j++;
  } else if (wordAt(text, j, "out")) {
    j = skipFiller(text, j + 3, MAX_DENOMINATOR_PADDING);
    if (!wordAt(text, j, "of")) return null;
    j += 2;
  } else {
    return null;
  }
  j = skipFiller(text, j, MAX_DENOMINATOR_PADDING);
  const den = readUnsigned(text, j);
  return den === null ? null : den.value;
}

/**
 * Reads the score that follows a phrase ending at `start`, or null when the
 * phrase is not followed (within `MAX_GAP` characters of fillers, separators
 * and the words is/of/was) by a number.
 *
 * A minus directly attached to the digits is a sign only when a separator has
 * already been seen ("Final score: -3" -> -3); otherwise it is the separator
 * itself ("Overall score -7.5" and "Overall score - 7.5" -> 7.5).
 */
function readScoreAfter(text: string, start: number): number | null {
  let i = start;
  let sawSeparator = false;
  let sign = 1;
  for (;;) {
    if (i >= text.length || i - start > MAX_GAP) return null;
    const c = text.charCodeAt(i);
    const next = i + 1 < text.length ? text.charCodeAt(i + 1) : -1;
    if (isDigit(c) || (c === 46 /* . */ && isDigit(next))) break;
    if (isMinus(c) && sawSeparator && (isDigit(next) || next === 46)) {
      sign = -1;
      i++;
      break;
    }
    if (c === 43 /* + */ && (isDigit(next) || next === 46)) {
      i++;
      break;
    }
    if (isFiller(c)) {
      i++;
      continue;
    }
    if (isSeparator(c)) {
      sawSeparator = true;
      i++;
      continue;
    }
    const word = GAP_WORDS.find((w) => wordAt(text, i, w));
    if (word === undefined) return null;
    sawSeparator = true;
    i += word.length;
  }

  const num = readUnsigned(text, i);
  if (num === null) return null;
  const value = sign * num.value;
  const den = readDenominator(text, num.end);
  const score = den !== null && den > 0 && Number.isFinite(den) ? value / den : value / 10;
  if (Number.isNaN(score)) return null;
  // Round away binary noise (9.2 / 10 is 0.9199999999999999) so that scores read as written.
  return Math.round(Math.min(1, Math.max(0, score)) * 1e9) / 1e9;
}

/**
 * Extracts the score from an evaluation. The last "final score" / "overall
 * score" occurrence that is followed by a number wins.
 */
export function parseScore(evaluation: string): ParsedScore {
  let result: number | null = null;
  PHRASE.lastIndex = 0;
  for (let m = PHRASE.exec(evaluation); m !== null; m = PHRASE.exec(evaluation)) {
    const score = readScoreAfter(evaluation, m.index + m[0].length);
    if (score !== null) result = score;
  }
  PHRASE.lastIndex = 0;
  return result === null ? { score: DEFAULT_SCORE, found: false } : { score: result, found: true };
}

/** Formats a 0..1 score on the 10-point scale used by evaluators, e.g. 0.75 -> "7.5/10". */
export function formatScore(score: number): string {
  const clamped = Number.isNaN(score) ? 0 : Math.min(1, Math.max(0, score));
  return `${Math.round(clamped * 100) / 10}/10`;
}
