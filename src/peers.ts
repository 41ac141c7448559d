/**
 * The optional peer dependencies an entry point needs (`langchain` for `/agents`; `hono` and
 * `@langchain/langgraph-sdk` for `/server`), looked for before the entry point's modules load, so a project
 * without one gets one error that says what to install, not a module-resolution failure from deep inside.
 */
import { ConfigurationError } from "./errors.js";

/** An optional peer: the package, the range the package is written against, and a module of it to import. */
interface Peer {
  name: string;
  range: string;
  module?: string;
}

/** Imports the peer's module; a missing package throws a ConfigurationError naming the entry point and the install command. */
export async function importPeer<T>(entry: string, peer: Peer): Promise<T> {
  try {
    return (await import(peer.module ?? peer.name)) as T;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    if (e?.code === "ERR_MODULE_NOT_FOUND" && [`'${peer.name}'`, `"${peer.name}"`].some((quoted) => String(e.message).includes(quoted))) {
      throw new ConfigurationError(
        `${entry} needs the "${peer.name}" package (${peer.range}), an optional peer dependency that is not installed. ` +
          `Install it beside this package: npm install ${peer.name}@"${peer.range}"`,
      );
    }
    throw error;
  }
}
