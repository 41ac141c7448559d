/**
 * Consumer fixture in a CommonJS project without `langchain`: require() of the main entry point gets the CommonJS
 * build, whose validation graph runs with a scripted model (one wrong answer, then a right one); `/agents` fails
 * as it loads, naming the missing optional peer. Prints one JSON line for the pack test.
 */
const { AIMessage } = require("@langchain/core/messages");
const { fakeModel } = require("@langchain/core/testing");
const { buildValidationGraph, TrustworthyOutputError } = require("langgraph-trustworthy-output");

let agents = "loaded";
try {
  require("langgraph-trustworthy-output/agents");
} catch (error) {
  agents = { code: error.code, message: error.message.split("\n")[0] };
}

const spec = {
  name: "discount",
  description: "A discount code with its percentage.",
  schema: { type: "object", required: ["code", "percent"], properties: { code: { type: "string" }, percent: { type: "integer", minimum: 1, maximum: 90 } } },
};
const model = fakeModel().respond(new AIMessage('{"code": "SAVE40", "percent": 400}')).respond(new AIMessage('{"code": "SAVE40", "percent": 40}'));
buildValidationGraph({ model, spec, maxAttempts: 3 })
  .invoke({ request: "A 40% discount code" })
  .then((out) => {
    const modules = Object.keys(require.cache).filter((path) => path.includes("/node_modules/langgraph-trustworthy-output/"));
    console.log(
      JSON.stringify({
        success: out.success,
        attempts: out.attempts,
        firstErrors: out.history[0].errors,
        errorFamily: typeof TrustworthyOutputError.isInstance,
        // Every module of the package this process loaded is a CommonJS one of dist/cjs/.
        cjsOnly: modules.length > 0 && modules.every((path) => path.includes("/dist/cjs/src/")),
        agents,
      }),
    );
  });
