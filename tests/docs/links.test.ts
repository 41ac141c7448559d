/** Every relative link in the README and docs/ reaches a file that exists, and an anchor that one of its headings makes. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { anchorOf, anchors, documentationPages, relativeLinks } from "./markdown.js";

describe("documentation links", () => {
  it("the README stays short, and the pages it links exist", () => {
    const pages = documentationPages();
    expect(pages.length).toBeGreaterThan(10);
    expect(Buffer.byteLength(readFileSync(join(REPO_ROOT, "README.md"), "utf8"))).toBeLessThan(15_000);
  });

  it.each(documentationPages())("%s: every relative link and anchor resolves", (page) => {
    const broken: string[] = [];
    for (const link of relativeLinks(page)) {
      const [path, anchor] = link.split("#");
      const target = path === "" ? page : normalize(join(dirname(page), path));
      if (!existsSync(join(REPO_ROOT, target))) broken.push(`${link} (no file ${target})`);
      else if (anchor !== undefined && target.endsWith(".md") && !anchors(target).has(anchor))
        broken.push(`${link} (no heading makes #${anchor} in ${target})`);
    }
    expect(broken).toEqual([]);
  });

  it("the tarball ships every page the README links, and every page those link in turn", () => {
    const files = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { files: string[] }).files;
    // npm always packs these; the rest is what package.json `files` names (simple globs: *, **/).
    const patterns = ["README.md", "LICENSE", "package.json", ...files].map(
      (glob) =>
        new RegExp(
          `^${glob
            .replace(/[.+^${}()|[\]\\]/g, "\\$&")
            .replace(/\*\*\//g, "(?:.*/)?")
            .replace(/\*/g, "[^/]*")}$`,
        ),
    );
    const shipped = (path: string) => patterns.some((pattern) => pattern.test(path));
    const seen = new Set(["README.md"]);
    const missing: string[] = [];
    for (const page of seen) {
      for (const link of relativeLinks(page)) {
        const path = link.split("#")[0];
        const target = path === "" ? page : normalize(join(dirname(page), path));
        if (!shipped(target)) missing.push(`${page} → ${target}`);
        else if (target.endsWith(".md")) seen.add(target);
      }
    }
    expect(seen.size).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it("anchors are made as GitHub makes them", () => {
    expect(anchorOf('What "valid" means')).toBe("what-valid-means");
    expect(anchorOf("Where state lives: `openPersistence`")).toBe("where-state-lives-openpersistence");
    expect(anchorOf("1. Embedded in Node code")).toBe("1-embedded-in-node-code");
  });
});
