/**
 * Setup of both projects (vitest.config.ts). Test files share worker processes (`isolate: false`), so
 * process-wide state one file leaves behind would reach whichever file runs next in that worker, which
 * varies from run to run. This guard snapshots that state before each file and fails the file that changed
 * it, at the end of that file, naming what it left: the global fetch, process event listeners, environment
 * variables, the working directory and the exit code.
 */
import { afterAll } from "vitest";

const EVENTS = ["unhandledRejection", "uncaughtException", "warning", "exit", "beforeExit", "SIGINT", "SIGTERM"] as const;

export type ProcessState = ReturnType<typeof processState>;

export function processState() {
  return {
    fetch: globalThis.fetch,
    listeners: Object.fromEntries(EVENTS.map((event) => [event, process.listeners(event as NodeJS.Signals)])),
    env: { ...process.env },
    cwd: process.cwd(),
    exitCode: process.exitCode,
  };
}

/** What differs between two snapshots, one line each; empty when nothing does. */
export function stateLeftBehind(before: ProcessState, after: ProcessState): string[] {
  const left: string[] = [];
  if (after.fetch !== before.fetch) left.push("globalThis.fetch replaced");
  for (const event of EVENTS) {
    const added = after.listeners[event].filter((l) => !before.listeners[event].includes(l)).length;
    const removed = before.listeners[event].filter((l) => !after.listeners[event].includes(l)).length;
    if (added || removed) left.push(`process "${event}" listeners: ${added} added, ${removed} removed`);
  }
  for (const key of new Set([...Object.keys(before.env), ...Object.keys(after.env)])) {
    if (before.env[key] !== after.env[key]) left.push(`process.env.${key} changed`);
  }
  if (after.cwd !== before.cwd) left.push(`working directory changed to ${after.cwd}`);
  if (after.exitCode !== before.exitCode) left.push(`process.exitCode set to ${String(after.exitCode)}`);
  return left;
}

const before = processState();

afterAll(() => {
  const left = stateLeftBehind(before, processState());
  if (left.length > 0) {
    throw new Error(`This test file left process-wide state behind for the next file in its worker: ${left.join("; ")}. Restore it in an afterAll/afterEach.`);
  }
});
