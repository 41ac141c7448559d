/**
 * One error family: every error the package throws on a user's path is a TrustworthyOutputError with a stable
 * `code`, and `isInstance` recognises its kind across copies of the package, also when a bundler has renamed
 * the classes.
 */
import { describe, expect, it } from "vitest";
import { ConfigurationError, ModelTimeoutError, ProviderError, SpecError, TrustworthyOutputError } from "../../src/errors.js";
import { DatabaseUnavailableError } from "../../src/persistence/open.js";
import { parseApiKeys } from "../../src/server/api-keys.js";

/** A second copy of the module, as a second install or a bundle would load it (a distinct module id; the other files' copies are untouched). */
async function anotherCopy(): Promise<typeof import("../../src/errors.js")> {
  return (await import("../../src/errors.ts?another-copy" as string)) as typeof import("../../src/errors.js");
}

describe("the error family", () => {
  it("each kind has a stable code", () => {
    expect(new TrustworthyOutputError("x").code).toBe("TRUSTWORTHY_OUTPUT");
    expect(new ConfigurationError("x").code).toBe("CONFIGURATION");
    expect(new SpecError("x").code).toBe("SPEC");
    expect(new ProviderError("x").code).toBe("PROVIDER");
    expect(new ModelTimeoutError(5, false).code).toBe("MODEL_TIMEOUT");
    expect(new DatabaseUnavailableError("x").code).toBe("DATABASE_UNAVAILABLE");
  });

  it("isInstance follows the classes: a SpecError is a ConfigurationError, a ProviderError is not", () => {
    expect(ConfigurationError.isInstance(new SpecError("x"))).toBe(true);
    expect(SpecError.isInstance(new ConfigurationError("x"))).toBe(false);
    expect(ConfigurationError.isInstance(new ProviderError("x"))).toBe(false);
    expect(TrustworthyOutputError.isInstance(new DatabaseUnavailableError("x"))).toBe(true);
    expect(TrustworthyOutputError.isInstance(new Error("x"))).toBe(false);
    expect(TrustworthyOutputError.isInstance(null)).toBe(false);
  });

  it("recognises an error thrown by another copy of the package, also when a bundler renamed its classes", async () => {
    const copy = await anotherCopy();
    expect(copy.ConfigurationError).not.toBe(ConfigurationError);
    // A bundler that shortens names: the other copy's classes are called "e" and "t".
    Object.defineProperty(copy.SpecError, "name", { value: "e" });
    Object.defineProperty(copy.ConfigurationError, "name", { value: "t" });
    const foreign = new copy.SpecError("from the other copy");
    expect(foreign instanceof ConfigurationError).toBe(false);
    expect(SpecError.isInstance(foreign)).toBe(true);
    expect(ConfigurationError.isInstance(foreign)).toBe(true);
    expect(ProviderError.isInstance(foreign)).toBe(false);
    expect(foreign.code).toBe("SPEC");
  });

  it("a malformed LANGGRAPH_API_KEYS is a ConfigurationError, not a plain Error", () => {
    for (const value of ["no-colon", "k:", ":user", "k:a,k:b"]) {
      const error = (() => {
        try {
          parseApiKeys(value);
        } catch (e) {
          return e;
        }
      })();
      expect(ConfigurationError.isInstance(error), value).toBe(true);
    }
  });
});
