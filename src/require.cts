/**
 * What `require()` of the package gets (package.json's "require" condition): one line saying that it is an
 * ES module and how to load it from CommonJS. Without it, Node would say only that no "exports" main is defined.
 * The package is ESM only (its `/agents` entry point waits for `langchain` as it loads, which `require()` cannot).
 */
throw new Error(
  'langgraph-trustworthy-output is an ES module and cannot be loaded with require(): use import, or from CommonJS `await import("langgraph-trustworthy-output")` inside an async function; or set "type": "module" in your package.json.',
);

export {};
