/**
 * Setup of the unit project (vitest.config.ts): a unit test that starts a child process, listens on a port
 * or opens a network connection (HTTP, PostgreSQL) fails at once, saying so, instead of quietly making the
 * fast suite slow. Such a test belongs in a file named *.int.test.ts.
 */
import { createRequire, syncBuiltinESMExports } from "node:module";
import net from "node:net";

function refuse(what: string): () => never {
  return () => {
    throw new Error(`A unit test may not ${what}; a test that needs to belongs in a file named *.int.test.ts (see vitest.config.ts).`);
  };
}

// The CommonJS exports object is the one that ESM named imports (`import { spawn } from "node:child_process"`)
// are synchronised from, so replacing its functions covers both kinds of import.
const childProcess = createRequire(import.meta.url)("node:child_process") as Record<string, unknown>;
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"]) {
  childProcess[name] = refuse(`start a child process (child_process.${name})`);
}
syncBuiltinESMExports();

net.Server.prototype.listen = refuse("listen on a port");
net.Socket.prototype.connect = refuse("open a network connection");
