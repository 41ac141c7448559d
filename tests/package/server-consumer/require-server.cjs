/**
 * Consumer fixture: `/server` from CommonJS in the server project (which has `hono` and `@langchain/langgraph-sdk`).
 * require() gets the CommonJS build: the graphs, the Auth and the HTTP app, and withServerRules on the project's
 * own Hono app, which serves the project's route after the rules (auth off). Prints one JSON line.
 */
const { Hono } = require("hono");
const { app, auth, reflexionGraph, validationGraph, withServerRules } = require("langgraph-trustworthy-output/server");

async function main() {
  const served = withServerRules({ app: new Hono().get("/hello", (c) => c.json({ hello: "from CommonJS" })) });
  const hello = await served.app.request("/hello");
  const modules = Object.keys(require.cache).filter((path) => path.includes("/node_modules/langgraph-trustworthy-output/"));
  console.log(
    JSON.stringify({
      graphs: [validationGraph.name, typeof reflexionGraph.invoke],
      app: typeof app.fetch,
      auth: typeof auth.authenticate,
      hello: [hello.status, await hello.json()],
      cjsOnly: modules.length > 0 && modules.every((path) => path.includes("/dist/cjs/src/")),
    }),
  );
}

// A failure ends the process with its error and exit status 1 (an unhandled rejection).
void main();
