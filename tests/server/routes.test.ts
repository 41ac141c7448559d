/**
 * The guard against upgrades: the routes the installed LangGraph server
 * registers, read from the package, must each have a row in docs/server.md's
 * route table, and each row must name attack-suite cases that drive it; the
 * routes src/server/http.ts answers must exist in the server; the assistants
 * treated as built-in must be the ones langgraph.json serves.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_GRAPHS, builtinAssistantId } from "../../src/server/auth.js";
import { createHttpApp } from "../../src/server/http.js";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { ATTACK_CASES } from "../../reliability/auth-attacks.js";
import { installedRoutes, readmeRouteTable } from "../../reliability/server-routes.js";

const config = JSON.parse(readFileSync(join(REPO_ROOT, "langgraph.json"), "utf8")) as {
  graphs: Record<string, string>;
  ui?: unknown;
  http?: Record<string, unknown>;
};

describe("the route table (docs/server.md) covers the installed server", () => {
  it("every route the installed @langchain/langgraph-api registers has a row, and every row is a registered route", async () => {
    const installed = [...(await installedRoutes()).keys()];
    expect(installed.length).toBeGreaterThan(40); // the enumeration reads the package, not nothing
    const documented = new Set(readmeRouteTable().map((row) => row.route));
    expect(
      installed.filter((route) => !documented.has(route)),
      "routes with no row in docs/server.md's table",
    ).toEqual([]);
    expect(
      [...documented].filter((route) => !installed.includes(route)),
      "rows for routes the server does not register",
    ).toEqual([]);
  });

  it("each row names attack cases that exist and drive its route", () => {
    const cases = new Map(ATTACK_CASES.map((c) => [c.id, c]));
    const problems: string[] = [];
    for (const row of readmeRouteTable()) {
      if (row.cases.length === 0) problems.push(`${row.route}: names no case`);
      for (const id of row.cases) if (!cases.has(id)) problems.push(`${row.route}: no case "${id}"`);
      if (!row.cases.some((id) => cases.get(id)?.routes.includes(row.route))) problems.push(`${row.route}: none of ${row.cases.join(", ")} drives it`);
    }
    expect(problems).toEqual([]);
  });

  it("the server mounts no route groups beyond those read (no UI; no built-in group disabled)", () => {
    expect(config.ui).toBeUndefined();
    expect(Object.keys(config.http ?? {}).filter((k) => k.startsWith("disable_"))).toEqual([]);
    expect(config.http?.app).toBe("./src/server/http.ts:app");
  });

  it("every route the custom HTTP app answers is a route of the server (a renamed route fails here, not silently)", async () => {
    const installed = [...(await installedRoutes()).keys()];
    const answered = createHttpApp({ auth: true })
      .routes.filter((r) => r.path !== "*")
      .map((r) => ({ method: r.method, path: r.path.replace(/:(\w+)/g, "{$1}").replace(/\/\*$/, "/") }));
    const missing = answered.filter(
      ({ method, path }) =>
        !installed.some((route) => {
          const [m, p] = route.split(" ");
          return (method === "ALL" || m === method) && (path.endsWith("/") ? p.startsWith(path) : p === path);
        }),
    );
    expect(missing).toEqual([]);
  });
});

describe("built-in assistants", () => {
  it("are the graphs langgraph.json serves, with the ids the server derives", () => {
    expect(Object.keys(config.graphs).sort()).toEqual([...BUILTIN_GRAPHS].sort());
    // The server's derivation (uuid v5 of the graph id in its namespace); the attack suite checks the live ids too.
    expect(builtinAssistantId("validation")).toBe("fae395e5-c461-5b4d-af54-6f94d03fae2f");
    expect(builtinAssistantId("reflexion")).toBe("c1f26b93-22a2-5d06-a6ce-6eb02271cdde");
  });
});
