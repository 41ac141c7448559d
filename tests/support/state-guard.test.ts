/** The state guard (tests/support/state-guard.ts) names each kind of process-wide state a test file can leave behind. */
import { describe, expect, it } from "vitest";
import { processState, stateLeftBehind } from "./state-guard.js";

describe("the state guard", () => {
  it("sees nothing when nothing changed", () => {
    expect(stateLeftBehind(processState(), processState())).toEqual([]);
  });

  it("names a replaced fetch, an added listener, a changed variable and a set exit code, and nothing once they are restored", () => {
    const before = processState();
    const realFetch = globalThis.fetch;
    const listener = () => undefined;
    const exitCode = process.exitCode;
    try {
      globalThis.fetch = (() => Promise.reject(new Error("unused"))) as typeof fetch;
      process.on("SIGTERM", listener);
      process.env.STATE_GUARD_PROBE = "1";
      process.exitCode = 3;
      expect(stateLeftBehind(before, processState())).toEqual([
        "globalThis.fetch replaced",
        'process "SIGTERM" listeners: 1 added, 0 removed',
        "process.env.STATE_GUARD_PROBE changed",
        "process.exitCode set to 3",
      ]);
    } finally {
      globalThis.fetch = realFetch;
      process.off("SIGTERM", listener);
      delete process.env.STATE_GUARD_PROBE;
      process.exitCode = exitCode;
    }
    expect(stateLeftBehind(before, processState())).toEqual([]);
  });
});
