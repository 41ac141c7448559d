/**
 * What the command line does with a terminal. The model's answer, its errors and a provider's messages
 * are text someone else chose: written raw, their control characters would act on the terminal (clear
 * the screen, move the cursor, retitle the window, reorder a line) and could print a fake verdict.
 */
import { createInterface } from "node:readline";

/**
 * Characters a terminal acts on, or that change how a line reads, instead of showing them: C0 controls
 * but newline and tab, DEL, C1 controls, bidi marks, embeddings, overrides and isolates, and the
 * Unicode line and paragraph separators.
 */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every such character shown as its escape, so it is inert and visible; newlines and tabs stay.
 * "text" writes `\x1b` for characters up to U+00FF and `\u202e` above. "json" writes `\u001b` for all,
 * which keeps the output of JSON.stringify (where such characters can only be inside strings) the
 * same JSON value.
 */
export function inert(text: string, form: "text" | "json" = "text"): string {
  return text.replace(ACTIVE, (ch) => {
    const code = ch.charCodeAt(0);
    return form === "text" && code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** Lines a person types, read by one reader for the whole run (a reader per line would drop what it had buffered). */
export interface LineReader {
  /** Shows `prompt` and resolves with the next line, or null at the end of input; rejects when `signal` aborts first. */
  read(prompt: string, signal?: AbortSignal): Promise<string | null>;
  /** Stops reading: an open terminal no longer keeps the process alive. */
  close(): void;
}

/** Lines of `input`, with the prompts written (inert) to `output`: the command line passes stdin and stderr. */
export function lineReader(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): LineReader {
  const queue: string[] = [];
  const waiting: Array<(line: string | null) => void> = [];
  let closed = false;
  // Not in terminal mode: the terminal's own line editing and echo stay as they are.
  const rl = createInterface({ input, terminal: false });
  rl.on("line", (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else queue.push(line);
  });
  rl.on("close", () => {
    closed = true;
    for (const waiter of waiting.splice(0)) waiter(null);
  });
  return {
    read(prompt, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      output.write(inert(prompt));
      if (queue.length > 0) return Promise.resolve(queue.shift()!);
      if (closed) return Promise.resolve(null);
      return new Promise((resolve, reject) => {
        const onAbort = () => {
          const at = waiting.indexOf(waiter);
          if (at >= 0) waiting.splice(at, 1);
          reject(signal!.reason);
        };
        const waiter = (line: string | null) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(line);
        };
        waiting.push(waiter);
        // Ctrl-C at the prompt ends the run like Ctrl-C anywhere else, rather than waiting for a line.
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    },
    close() {
      // readline pauses the input on close; a paused stdin lets the process exit.
      rl.close();
    },
  };
}
