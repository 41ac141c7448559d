import { describe, expect, it } from "vitest";
import { DEFAULT_SCORE, formatScore, parseScore } from "../../src/reflexion/score.js";

describe("parseScore", () => {
  const table: Array<[string, number]> = [
    ["**Final Score:** 8", 0.8],
    ["Final score: 8/10", 0.8],
    ["Overall score - 7.5", 0.75],
    ["FINAL SCORE = 9.5", 0.95],
    ["Overall Score: **7**", 0.7],
    ["final score of 6", 0.6],
    ["Final score: 85/100", 0.85],
    ["Final score: 4/5", 0.8],
    ["Final score is 9", 0.9],
    ["Final Score: 8 out of 10", 0.8],
    ["Final score: **8**/10", 0.8],
    ["Final score: 7 / 10", 0.7],
    ["The final score: 7.", 0.7],
    ["__Overall score__: 3", 0.3],
    ["### Final Score\n\n**6**", 0.6],
    ["final  score: 5", 0.5],
    ["Final score: 10", 1],
    ["Final score: 0", 0],
    // A bare number is always out of 10, even one that looks like a fraction.
    ["Overall score: 0.85", 0.085],
    // A minus directly before the number is the separator unless one was already seen.
    ["Overall score -7.5", 0.75],
    ["Overall score: - 7", 0.7],
  ];

  it.each(table)("reads %j as %d", (text, expected) => {
    const result = parseScore(text);
    expect(result.found).toBe(true);
    expect(result.score).toBeCloseTo(expected, 10);
  });

  it("reads the score inside a realistic evaluation", () => {
    const evaluation = [
      "## Evaluation",
      "- Correctness: 9/10 — the query is valid.",
      "- Completeness: 6/10, misses the index.",
      "- Score for style: 7",
      "",
      "**Final Score:** 7.5/10",
      "",
      "The response is good overall.",
    ].join("\n");
    expect(parseScore(evaluation)).toEqual({ score: 0.75, found: true });
  });

  it("falls back to 0.5 with found=false when there is no score", () => {
    const none = ["", "The answer looks fine.", "Final score: excellent", "Final score: N/A", "Overall score pending review", "Final score:"];
    for (const text of none) {
      expect(parseScore(text)).toEqual({ score: DEFAULT_SCORE, found: false });
    }
    expect(DEFAULT_SCORE).toBe(0.5);
  });

  it("ignores 'score' without 'final' or 'overall'", () => {
    expect(parseScore("Score: 9")).toEqual({ score: 0.5, found: false });
    expect(parseScore("My score is 9/10, total score 8")).toEqual({ score: 0.5, found: false });
    expect(parseScore("semifinal score: 9")).toEqual({ score: 0.5, found: false });
    expect(parseScore("final scores: 9")).toEqual({ score: 0.5, found: false });
    expect(parseScore("Score: 9. Final score: 4")).toEqual({ score: 0.4, found: true });
  });

  it("uses the last phrase followed by a number", () => {
    expect(parseScore("Overall score: 6\n...\nFinal score: 9").score).toBeCloseTo(0.9);
    expect(parseScore("Final score: 9\n...\nOverall score: 3").score).toBeCloseTo(0.3);
    expect(parseScore("Final score: 2. Final score: 5. Final score: 8/10").score).toBeCloseTo(0.8);
    // The last phrase has no number, so the previous one wins.
    expect(parseScore("Final score: 7. The final score is explained below.")).toEqual({ score: 0.7, found: true });
  });

  it("clamps out-of-range values into [0, 1] and still reports found", () => {
    expect(parseScore("Final score: 15")).toEqual({ score: 1, found: true });
    expect(parseScore("Final score: 150/100")).toEqual({ score: 1, found: true });
    expect(parseScore("Final score: -3")).toEqual({ score: 0, found: true });
    expect(parseScore("Final score = -2/10")).toEqual({ score: 0, found: true });
    expect(parseScore("Final score is -4")).toEqual({ score: 0, found: true });
    expect(parseScore("Overall score - -3")).toEqual({ score: 0, found: true });
  });

  it("limits the gap between the phrase and the number", () => {
    expect(parseScore(`Final score:${" ".repeat(30)}8`).found).toBe(false);
    expect(parseScore(`Final score:${" ".repeat(15)}8`)).toEqual({ score: 0.8, found: true });
    expect(parseScore("Final score (see the rubric above): 8").found).toBe(false);
  });

  it("treats a zero denominator as absent and never returns NaN", () => {
    expect(parseScore("Final score: 8/0")).toEqual({ score: 0.8, found: true });
    const huge = "9".repeat(400);
    expect(parseScore(`Final score: ${huge}`)).toEqual({ score: 1, found: true });
    expect(parseScore(`Final score: ${huge}/${huge}`)).toEqual({ score: 1, found: true });

    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed / 2 ** 32;
    };
    const pieces = ["final", "overall", " score", ": ", "-", "/", "0", "8", ".", "**", " is ", " of ", "\n", "x", "100", "e5"];
    for (let i = 0; i < 2000; i++) {
      let text = "";
      const n = 1 + Math.floor(random() * 12);
      for (let j = 0; j < n; j++) text += pieces[Math.floor(random() * pieces.length)];
      const { score, found } = parseScore(text);
      expect(Number.isFinite(score)).toBe(true);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(1);
      if (!found) expect(score).toBe(DEFAULT_SCORE);
    }
  });

  it("handles 1 MB evaluations full of score phrases", () => {
    const unit = "final score overall score score: final overall score - Final Score: x ";
    const big = unit.repeat(Math.ceil(1_000_000 / unit.length));
    expect(parseScore(big)).toEqual({ score: 0.5, found: false });
    expect(parseScore(`${big}Overall score: 6/10`)).toEqual({ score: 0.6, found: true });
    expect(parseScore("final score: 7 ".repeat(70_000))).toEqual({ score: 0.7, found: true });
    expect(parseScore(`final score${" ".repeat(1_000_000)}8`).found).toBe(false);
    expect(parseScore(`Final score: ${"*".repeat(1_000_000)}8`).found).toBe(false);
    // The denominator must be close to the number; otherwise 85 is read as 85/10 and clamped.
    expect(parseScore(`Final score: 85${" ".repeat(1_000_000)}/100`)).toEqual({ score: 1, found: true });
  });
});

describe("formatScore", () => {
  it("formats on the 10-point scale", () => {
    expect(formatScore(0.8)).toBe("8/10");
    expect(formatScore(0.75)).toBe("7.5/10");
    expect(formatScore(0)).toBe("0/10");
    expect(formatScore(1.7)).toBe("10/10");
    expect(formatScore(Number.NaN)).toBe("0/10");
  });
});
