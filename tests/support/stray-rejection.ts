/**
 * Preload for a command-line child process in tests: the first fetch leaves one rejected promise
 * unhandled, as a faulty library might, so the test can see what the process does with it.
 */
const realFetch = globalThis.fetch;
let fired = false;
globalThis.fetch = ((...args: Parameters<typeof fetch>) => {
  if (!fired) {
    fired = true;
    void Promise.reject(new Error("stray rejection from a library"));
  }
  return realFetch(...args);
}) as typeof fetch;
