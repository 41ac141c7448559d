/**
 * The command line on a terminal. What the model or the provider says reaches the person inert (its
 * control characters shown as escapes, never acted on), stdout stays the same JSON; and an --interactive
 * run on a real terminal (a pseudo-terminal through util-linux `script`) exits as soon as it ends, without
 * waiting for the end of input that a terminal never sends on its own.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { runCli } from "../../testkit/cli.js";
import { scriptedServerPerFile } from "../support/scripted-server.js";

const EXAMPLE = builtinSpecs.get("deployment-config")!.example as Record<string, any>;
const FIXED = { ...EXAMPLE, replicas: 8, resources: { cpu_limit: 2, memory_limit_mb: 512 } };
/** Clears the screen, homes the cursor, retitles the window, rings, overwrites the line, then a C1 CSI and a right-to-left override. */
const SPOOF = "\x1b[2J\x1b[H\x1b]0;pwned\x07The value is valid\r\x9b2J\u202e";
/** An answer that fails the spec with its control characters before the JSON and inside a value an error quotes. */
const HOSTILE = `${SPOOF}\n${JSON.stringify({ ...EXAMPLE, replicas: 8, service_name: "pay\u202eipa\x9b\x1b[2J" })}`;

/** What a terminal acts on rather than shows (newline and tab aside); `\r` is left to the pseudo-terminal test, whose line discipline writes it. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const ACTIVE_BUT_CR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const scripted = scriptedServerPerFile();
const env = scripted.cliEnv;

describe("what the model and the provider say is shown inert", () => {
  it("--interactive: the last answer and its errors show their control characters as escapes, behind a margin", async () => {
    scripted.server().setReplies([HOSTILE]);
    const r = await runCli(["--interactive", "--max-attempts", "1", "x"], env(), { readLine: async () => ":reject" });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(ACTIVE);
    expect(r.stderr).toContain("\\x1b[2J\\x1b[H\\x1b]0;pwned\\x07The value is valid\\x0d\\x9b2J\\u202e");
    // The error quoting service_name shows the same escapes.
    expect(r.stderr).toMatch(/service_name is "pay\\u202eipa\\x9b\\u001b\[2J"/);
    // No line of the answer can pass for the command's own output.
    for (const line of r.stderr.split("\n").filter((l) => l.includes("The value is valid") || l.includes('"replicas":8'))) {
      expect(line.startsWith("  | ")).toBe(true);
    }
    expect(r.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(r.stdout)).toMatchObject({ success: false, stopReason: "rejected" });
  });

  it("stdout: a valid value with such characters in its strings is the same JSON value, none of them raw", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-terminal-"));
    const spec = join(dir, "note.json");
    writeFileSync(
      spec,
      JSON.stringify({ name: "note", description: "a note", schema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } }),
    );
    const value = { text: `${SPOOF}\x7f\u2066\u2028end` };
    scripted.server().setReplies([JSON.stringify(value)]);
    const r = await runCli(["--spec", spec, "a note"], env());
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(r.stdout)).toEqual(value);
  });

  it("a provider's error message: inert on stderr, the same text in stdout's JSON", async () => {
    const message = `${SPOOF}bad request`;
    scripted.server().setReplies([{ fault: "status", status: 400, body: { error: { message, type: "invalid_request_error" } } }]);
    const r = await runCli(["x"], env());
    expect(r.code).toBe(3);
    expect(r.stderr).not.toMatch(ACTIVE);
    expect(r.stderr).toContain("\\x1b[2J\\x1b[H");
    expect(r.stdout).not.toMatch(ACTIVE);
    expect(JSON.parse(r.stdout).error.message).toContain(message);
  });
});

// ---------------------------------------------------------------------------------------------------
// A real terminal: the command runs in a pseudo-terminal, so its standard input is a terminal that
// never ends on its own, as when a person runs it. The pipe into `script` is kept open throughout.
// ---------------------------------------------------------------------------------------------------

const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).stdout?.includes("util-linux") === true;
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const CLI = join(import.meta.dirname, "../../src/cli/generate.ts");
/**
 * From the answer to the exit took 50-200 ms here (two shared cores, other test runs going); a run that
 * waits for the end of input never exits. The deadline only tells the two apart.
 */
const EXIT_DEADLINE_MS = 30_000;

const shellQuote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;

/** The command line in a pseudo-terminal: `screen` is everything the terminal showed (its line endings \r\n). */
function startInTerminal(args: string[]) {
  const command = [process.execPath, "--import", TSX, CLI, ...args].map(shellQuote).join(" ");
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    cwd: mkdtempSync(join(tmpdir(), "cli-tty-")),
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TERM: "dumb", ...env() },
    stdio: ["pipe", "pipe", "pipe"],
    // Its own process group, so a run that does not end can be killed with everything under it.
    detached: true,
  });
  let screen = "";
  child.stdout!.on("data", (d) => (screen += d));
  child.stderr!.on("data", (d) => (screen += d));
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  let ended = false;
  void exit.then(
    () => (ended = true),
    () => (ended = true),
  );
  const kill = () => {
    if (!ended) process.kill(-child.pid!, "SIGKILL");
  };
  return {
    screen: () => screen,
    type: (text: string) => child.stdin!.write(text),
    async waitFor(text: string, ms = 120_000): Promise<void> {
      const until = Date.now() + ms;
      while (!screen.includes(text)) {
        if (ended) throw new Error(`the command ended before showing ${JSON.stringify(text)}:\n${screen}`);
        if (Date.now() > until) throw new Error(`no ${JSON.stringify(text)} within ${ms} ms:\n${screen}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    /** The exit status, or "still running" when the command has not ended within the deadline (it is killed then). */
    async exited(ms = EXIT_DEADLINE_MS): Promise<number | null | "still running"> {
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([exit, new Promise<"still running">((resolve) => (timer = setTimeout(() => resolve("still running"), ms)))]);
      clearTimeout(timer);
      if (outcome === "still running") kill();
      return outcome;
    },
    close() {
      kill();
      child.stdin!.destroy();
    },
  };
}

const PROMPT = "Type the corrected JSON";

describe.skipIf(!hasScript)("--interactive on a real terminal ends without waiting for the end of input", () => {
  it("after a valid value: exit 0, the value printed, nothing of the model's acted on", async () => {
    scripted.server().setReplies([HOSTILE]);
    const terminal = startInTerminal(["--interactive", "--max-attempts", "1", "payments with 8 replicas"]);
    try {
      await terminal.waitFor(PROMPT);
      terminal.type(`${JSON.stringify(FIXED)}\n`);
      const code = await terminal.exited();
      expect(code, `the command did not exit on its own:\n${terminal.screen()}`).toBe(0);
      const screen = terminal.screen().replace(/\r\n/g, "\n");
      expect(screen).toContain("your value is valid");
      expect(screen).toContain(JSON.stringify(FIXED, null, 2));
      expect(screen).toContain("\\x1b[2J");
      expect(terminal.screen()).not.toMatch(ACTIVE_BUT_CR);
    } finally {
      terminal.close();
    }
  }, 240_000);

  it("after :reject: exit 1", async () => {
    scripted.server().setReplies([HOSTILE]);
    const terminal = startInTerminal(["--interactive", "--max-attempts", "1", "x"]);
    try {
      await terminal.waitFor(PROMPT);
      terminal.type(":reject not now\n");
      const code = await terminal.exited();
      expect(code, `the command did not exit on its own:\n${terminal.screen()}`).toBe(1);
      expect(terminal.screen()).toContain('"stopReason": "rejected"');
    } finally {
      terminal.close();
    }
  }, 240_000);

  it("Ctrl-C at the prompt: exit 130 at once, not after a second Ctrl-C", async () => {
    scripted.server().setReplies([HOSTILE]);
    const terminal = startInTerminal(["--interactive", "--max-attempts", "1", "x"]);
    try {
      await terminal.waitFor(PROMPT);
      terminal.type("\x03");
      const code = await terminal.exited();
      expect(code, `the command did not exit on its own:\n${terminal.screen()}`).toBe(130);
      expect(terminal.screen()).toContain('"exitCode": 130');
    } finally {
      terminal.close();
    }
  }, 240_000);
});
