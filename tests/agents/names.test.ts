/**
 * The `/agents` entry point's names follow LangChain's (`…Middleware`), and the
 * middleware is known by the same name inside the agent (its nodes, its
 * checkpoints). No earlier name is kept: the package is 0.x and unpublished.
 */
import { describe, expect, it } from "vitest";
import * as agents from "../../src/agents/index.js";

describe("the /agents names", () => {
  it("exports validatedResponseMiddleware and guardToolsMiddleware, and no earlier name", () => {
    expect(typeof agents.validatedResponseMiddleware).toBe("function");
    expect(typeof agents.guardToolsMiddleware).toBe("function");
    expect(Object.keys(agents)).not.toContain("validatedResponse");
    expect(Object.keys(agents)).not.toContain("guardTools");
  });

  it("builds LangChain middleware named as its factory", () => {
    expect(agents.validatedResponseMiddleware({ spec: "deployment-config" }).name).toBe("validatedResponseMiddleware");
    expect(agents.guardToolsMiddleware({ tools: { deploy: "deployment-config" } }).name).toBe("guardToolsMiddleware");
  });
});
