/**
 * Consumer fixture, in a project without the optional peer `langchain`: the
 * main entry point imports as always, and `/agents` fails as it loads with
 * the runtime's error naming the missing package. Prints one JSON line for
 * the pack test.
 */
const main = await import("langgraph-trustworthy-output");
let agents = "loaded";
try {
  await import("langgraph-trustworthy-output/agents");
} catch (error) {
  agents = { code: error.code, message: error.message };
}
console.log(JSON.stringify({ main: typeof main.buildValidationGraph, agents }));
