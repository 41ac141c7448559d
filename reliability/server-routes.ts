/**
 * The routes the installed LangGraph server (@langchain/langgraph-api)
 * registers, read from the package itself, and the route table of docs/server.md's
 * Authentication section, so a test can check that the table covers every
 * route (and an upgrade that adds one fails it).
 *
 * Routes come from two places in the package: the Hono apps in `dist/api/`
 * (each module's default export is an app, or a function that builds one, as
 * for the protocol routes), read through the app's `.routes`; and the routes
 * `dist/server.mjs` registers on its own app (`app.post("/internal/truncate")`),
 * read from its source.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "../testkit/dev-server.js";

export const API_DIST = join(REPO_ROOT, "node_modules", "@langchain", "langgraph-api", "dist");

/** "METHOD /path/{param}": the server's `:param` written `{param}` (an optional one `{param?}`). */
export type RouteKey = string;

const render = (method: string, path: string): RouteKey =>
  `${method.toUpperCase()} ${path.replace(/:([A-Za-z_]\w*)(\?)?/g, (_, name: string, optional?: string) => `{${name}${optional ?? ""}}`)}`;

interface HonoLike {
  routes: Array<{ method: string; path: string }>;
}

const PROCESS_EVENTS = ["uncaughtException", "unhandledRejection"] as const;

/**
 * Imports a module of the server's and removes the process handlers its import installs: the server's
 * logging module registers `uncaughtException` and `unhandledRejection` handlers for the server's own
 * process, which here would be a test's or a script's.
 */
async function importServerModule(url: string): Promise<{ default?: unknown }> {
  const listeners = (event: string) => process.listeners(event as NodeJS.Signals) as Array<(...args: unknown[]) => void>;
  const before = new Map(PROCESS_EVENTS.map((event) => [event, listeners(event)]));
  try {
    return (await import(url)) as { default?: unknown };
  } finally {
    for (const event of PROCESS_EVENTS) {
      for (const listener of listeners(event)) if (!before.get(event)!.includes(listener)) process.removeListener(event, listener);
    }
  }
}

/** Every route the installed server registers, sorted; `sources` says which module each came from. */
export async function installedRoutes(): Promise<Map<RouteKey, string>> {
  const routes = new Map<RouteKey, string>();
  const apiDir = join(API_DIST, "api");
  for (const file of readdirSync(apiDir)
    .filter((f) => f.endsWith(".mjs"))
    .sort()) {
    const mod = await importServerModule(pathToFileURL(join(apiDir, file)).href);
    let app = mod.default;
    // The protocol module exports a factory taking the WebSocket upgrader and the storage ops.
    if (typeof app === "function") app = (app as (u: unknown, o: unknown) => unknown)(() => async () => undefined, { runs: {}, threads: {} });
    const hono = app as Partial<HonoLike>;
    if (!Array.isArray(hono?.routes))
      throw new Error(`${file}: its default export is not a Hono app (no .routes); read it and update reliability/server-routes.ts.`);
    for (const r of hono.routes) {
      if (r.method === "ALL" && (r.path === "*" || r.path === "/*")) continue; // middleware, not a route
      routes.set(render(r.method, r.path), `dist/api/${file}`);
    }
  }
  const server = readFileSync(join(API_DIST, "server.mjs"), "utf8");
  for (const m of server.matchAll(/\bapp\.(get|post|put|patch|delete|all)\(\s*"([^"]+)"/g)) routes.set(render(m[1], m[2]), "dist/server.mjs");
  // Every app the server mounts must be one of those read above (or the custom app / the UI, checked by the caller).
  for (const m of server.matchAll(/\bapp\.route\("\/",\s*([A-Za-z_]\w*)/g)) {
    const name = m[1];
    const imported = new RegExp(`import ${name} from "\\./api/[\\w-]+\\.mjs"`).test(server);
    if (!imported && name !== "api" && !/^protocol$/.test(name)) throw new Error(`dist/server.mjs mounts an app "${name}" this enumeration does not read.`);
  }
  return new Map([...routes].sort(([a], [b]) => a.localeCompare(b)));
}

export interface TableRow {
  route: RouteKey;
  rule: string;
  /** Attack-suite case ids named in the row's last column. */
  cases: string[];
}

/** The rows of the route table in docs/server.md's "Authentication" section: `| \`METHOD /path\` | rule | … | case ids |`. */
export function readmeRouteTable(readme = readFileSync(join(REPO_ROOT, "docs", "server.md"), "utf8")): TableRow[] {
  const heading = /^(#{2,4}) Authentication\b.*$/m.exec(readme);
  if (!heading) throw new Error('docs/server.md has no "Authentication" section.');
  const rest = readme.slice(heading.index + heading[0].length);
  // The section ends at the next heading of its level or above.
  const end = rest.search(new RegExp(`^#{1,${heading[1].length}} `, "m"));
  const section = end < 0 ? rest : rest.slice(0, end);
  const rows: TableRow[] = [];
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4) continue;
    const routes = [...cells[1].matchAll(/`((?:GET|POST|PUT|PATCH|DELETE|ALL) [^`]+)`/g)].map((m) => m[1]);
    if (routes.length === 0) continue;
    const cases = [...cells[cells.length - 2].matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]);
    for (const route of routes) rows.push({ route, rule: cells[2], cases });
  }
  return rows;
}
