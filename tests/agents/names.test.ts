/**
 * The `/agents` entry point's names follow LangChain's (`…Middleware`), and the
 * earlier names stay, deprecated, as the very same functions for one more
 * minor release (CHANGELOG.md).
 */
import { describe, expect, it } from "vitest";
import * as agents from "../../src/agents/index.js";

describe("the /agents names", () => {
  it("exports validatedResponseMiddleware and guardToolsMiddleware, and the deprecated names as the same functions", () => {
    expect(typeof agents.validatedResponseMiddleware).toBe("function");
    expect(typeof agents.guardToolsMiddleware).toBe("function");
    expect(agents.validatedResponse).toBe(agents.validatedResponseMiddleware);
    expect(agents.guardTools).toBe(agents.guardToolsMiddleware);
  });

  it("builds LangChain middleware under the new names", () => {
    expect(agents.validatedResponseMiddleware({ spec: "deployment-config" }).name).toMatch(/\S/);
    expect(agents.guardToolsMiddleware({ tools: { deploy: "deployment-config" } }).name).toMatch(/\S/);
  });
});
