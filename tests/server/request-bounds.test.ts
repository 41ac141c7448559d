/**
 * The bounds of a request body (src/server/request-bounds.ts) at the door of
 * the HTTP app, driven with the Hono app directly (no server runs here: a body
 * the door lets through reaches no route and is answered 404), and the
 * validation graph's own bound on ruleContext, which an embedded run meets.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigurationError } from "../../src/errors.js";
import { MAX_BODY_BYTES, createHttpApp } from "../../src/server/http.js";
import { REQUEST_LIMITS } from "../../src/server/request-bounds.js";
import { MAX_REQUEST_CHARS } from "../../src/settings.js";
import { MAX_TASKS } from "../../src/reflexion/configuration.js";
import { RULE_CONTEXT_LIMITS, ensureValidationConfig } from "../../src/validation/configuration.js";
import { buildValidationGraph } from "../../src/index.js";
import { REPO_ROOT } from "../../testkit/dev-server.js";
import { scriptedModel } from "../../testkit/scripted-model.js";

/** JSON text of an object nested `levels` deep: {"a":{"a":…1…}}; written out, as JSON.stringify cannot write one this deep. */
const nestedText = (levels: number) => `${'{"a":'.repeat(levels - 1)}{"a":1}${"}".repeat(levels - 1)}`;
/** JSON text of a run body whose context.ruleContext nests `levels` deep. */
const runWithRuleContext = (levels: number) => `{"assistant_id":"validation","input":{"request":"deploy"},"context":{"ruleContext":${nestedText(levels)}}}`;

const app = createHttpApp({ auth: false });
async function post(path: string, body: string, method = "POST") {
  const res = await app.request(path, { method, headers: { "content-type": "application/json" }, body });
  const text = await res.text();
  let json: { error?: string; message?: string } = {};
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    // a route's plain-text answer (404 here)
  }
  return { status: res.status, message: json.message ?? "", error: json.error };
}

describe("the door: every part of a JSON body within its bounds", () => {
  it("a run whose context.ruleContext nests 20,000 levels is refused with 422, naming the field and the limit", async () => {
    const reply = await post("/threads/t1/runs/wait", runWithRuleContext(20_000));
    expect(reply.status).toBe(422);
    expect(reply.error).toBe("UnprocessableEntity");
    expect(reply.message).toContain(`context.ruleContext nests deeper than ${RULE_CONTEXT_LIMITS.maxDepth} levels`);
  });

  it("ruleContext at its depth limit passes; one level more is refused; the same through config.configurable", async () => {
    expect((await post("/threads/t1/runs", runWithRuleContext(RULE_CONTEXT_LIMITS.maxDepth))).status).toBe(404);
    expect((await post("/threads/t1/runs", runWithRuleContext(RULE_CONTEXT_LIMITS.maxDepth + 1))).status).toBe(422);
    const viaConfig = await post("/runs", `{"assistant_id":"validation","config":{"configurable":{"ruleContext":${nestedText(1_000)}}}}`);
    expect(viaConfig.status).toBe(422);
    expect(viaConfig.message).toContain(`config.configurable.ruleContext nests deeper than ${RULE_CONTEXT_LIMITS.maxDepth} levels`);
  });

  it("a ruleContext over its size is refused with 413, naming the field and the limit", async () => {
    const big = JSON.stringify({ services: Array.from({ length: 20_000 }, (_, i) => `service-${i}`) });
    const reply = await post("/runs/stream", `{"assistant_id":"validation","context":{"ruleContext":${big}}}`);
    expect(reply.status).toBe(413);
    expect(reply.error).toBe("PayloadTooLarge");
    expect(reply.message).toContain(`context.ruleContext is ${big.length} characters of JSON, over the limit of ${RULE_CONTEXT_LIMITS.maxChars}`);
  });

  it.each([
    ["input", "/threads/t1/runs", (deep: string) => `{"assistant_id":"validation","input":{"request":${deep}}}`, "input.request"],
    ["metadata of a thread", "/threads", (deep: string) => `{"metadata":{"note":${deep}}}`, "metadata.note"],
    ["metadata of an assistant patch", "/assistants/a1", (deep: string) => `{"metadata":{"note":${deep}}}`, "metadata.note"],
    ["a command's resume", "/threads/t1/runs", (deep: string) => `{"assistant_id":"validation","command":{"resume":${deep}}}`, "command.resume"],
    ["a store value", "/store/items", (deep: string) => `{"namespace":["memories","alice"],"key":"k","value":${deep}}`, "value.a"],
    ["a state write's values", "/threads/t1/state", (deep: string) => `{"values":{"request":${deep}},"as_node":"__start__"}`, "values.request"],
    ["a new thread's supersteps", "/threads", (deep: string) => `{"supersteps":[{"updates":[{"values":${deep}}]}]}`, "supersteps"],
    ["an assistant's config", "/assistants", (deep: string) => `{"graph_id":"validation","config":{"tags":${deep}}}`, "config.tags"],
    ["a field no route knows", "/runs", (deep: string) => `{"assistant_id":"validation","extra":[${deep}]}`, "extra"],
  ])("%s nested 20,000 levels is refused with 422 naming it and the limit", async (_, path, body, field) => {
    const method = path.startsWith("/assistants/") ? "PATCH" : path === "/store/items" ? "PUT" : "POST";
    const reply = await post(path, body(nestedText(20_000)), method);
    expect(reply.status).toBe(422);
    expect(reply.message).toContain(`${field} nests deeper than ${REQUEST_LIMITS.maxDepth} levels`);
  });

  it("a resume too large or too deep is refused before the server stores it, saying the paused run stays paused", async () => {
    const big = await post(
      "/threads/t1/runs/wait",
      JSON.stringify({ assistant_id: "validation", command: { resume: { type: "edit", value: "x".repeat(REQUEST_LIMITS.partChars.command) } } }),
    );
    expect(big.status).toBe(413);
    expect(big.message).toMatch(/^command is \d+ characters of JSON, over the limit of 1001000 for this field\. .*a paused run is still paused/);
    const deep = await post("/threads/t1/commands", `{"id":1,"method":"input.respond","params":{"namespace":[],"responses":[${nestedText(100)}]}}`);
    expect(deep.status).toBe(422);
    expect(deep.message).toMatch(/^params\.responses nests deeper than 68 levels.*a paused run is still paused/);
  });

  it("each item of a batch is a body: the bad one is named by its index", async () => {
    const ok = `{"assistant_id":"validation","input":{"request":"deploy"}}`;
    const reply = await post("/runs/batch", `[${ok},${runWithRuleContext(5_000)}]`);
    expect(reply.status).toBe(422);
    expect(reply.message).toContain("[1].context.ruleContext nests deeper");
  });

  it("a part over its size is refused with 413 naming the part and its limit; the same content in a part with room passes", async () => {
    const text = "x".repeat(REQUEST_LIMITS.partChars.metadata);
    const reply = await post("/threads", JSON.stringify({ metadata: { note: text } }));
    expect(reply.status).toBe(413);
    expect(reply.message).toContain(
      `metadata is ${text.length + 11} characters of JSON, over the limit of ${REQUEST_LIMITS.partChars.metadata} for this field`,
    );
    const context = await post(
      "/runs",
      JSON.stringify({ assistant_id: "validation", context: { systemPrompt: "x".repeat(REQUEST_LIMITS.partChars.context) } }),
    );
    expect(context.status).toBe(413);
    expect(context.message).toContain("context is");
    expect((await post("/store/items", JSON.stringify({ namespace: ["n"], key: "k", value: { note: text } }), "PUT")).status).toBe(404);
  });

  it("what real use sends passes: Reflexion's largest input, an inline spec with a ruleContext at its limits, a resume 64 levels deep", async () => {
    const tasks = Array.from({ length: MAX_TASKS }, () => "t".repeat(MAX_REQUEST_CHARS));
    expect((await post("/runs/wait", JSON.stringify({ assistant_id: "reflexion", input: { tasks } }))).status).toBe(404);
    const ruleContext = { services: ["s".repeat(RULE_CONTEXT_LIMITS.maxChars - 20)] };
    const spec = { name: "s", schema: { type: "object", description: "d".repeat(19_000) } };
    expect(
      (await post("/runs", JSON.stringify({ assistant_id: "validation", context: { spec, ruleContext, systemPrompt: "p".repeat(MAX_REQUEST_CHARS) } }))).status,
    ).toBe(404);
    expect((await post("/threads/t1/runs", `{"assistant_id":"validation","command":{"resume":{"type":"edit","value":${nestedText(64)}}}}`)).status).toBe(404);
  });

  it("a body that is not JSON, or has none, is left to the route; one over MAX_BODY_BYTES is still 413", async () => {
    expect((await post("/threads", "{not json")).status).toBe(404);
    expect((await app.request("/threads/t1/runs", { method: "GET" })).status).toBe(404);
    const chunks = Math.ceil(MAX_BODY_BYTES / 1_000_000) + 1;
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === chunks) return controller.close();
        controller.enqueue(new TextEncoder().encode(sent === 1 ? `{"metadata":"${"x".repeat(999_986)}` : "x".repeat(1_000_000)));
      },
    });
    const res = await app.request("/threads", { method: "POST", headers: { "content-type": "application/json" }, body: stream, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { message: string }).message).toContain(`larger than ${MAX_BODY_BYTES} bytes`);
  });
});

describe("the validation graph's own bound on ruleContext (an embedded run, no server)", () => {
  const deep = () => JSON.parse(nestedText(20_000)) as Record<string, unknown>;

  it("a ruleContext too deep or too large is a ConfigurationError naming the limit", () => {
    expect(() => ensureValidationConfig({ context: { ruleContext: deep() } })).toThrow(ConfigurationError);
    expect(() => ensureValidationConfig({ context: { ruleContext: deep() } })).toThrow(`ruleContext nests deeper than ${RULE_CONTEXT_LIMITS.maxDepth} levels`);
    expect(() => ensureValidationConfig({ configurable: { ruleContext: { list: "x".repeat(RULE_CONTEXT_LIMITS.maxChars) } } })).toThrow(
      `over the limit of ${RULE_CONTEXT_LIMITS.maxChars} characters`,
    );
    const facts = { services: ["payments"] };
    const cfg = ensureValidationConfig({ context: { ruleContext: facts } });
    expect(cfg.ruleContext).toEqual(facts);
    expect(cfg.ruleContext).not.toBe(facts); // a copy: the caller's object cannot change the run's facts
  });

  it("a run with a 20,000-deep ruleContext ends with the ConfigurationError before any model call", async () => {
    const model = scriptedModel(['{"replicas": 1}']);
    const graph = buildValidationGraph({ model, spec: "deployment-config" });
    await expect(graph.invoke({ request: "deploy" }, { context: { ruleContext: deep() } })).rejects.toThrow(
      `ruleContext nests deeper than ${RULE_CONTEXT_LIMITS.maxDepth} levels`,
    );
    expect(model.calls).toHaveLength(0);
  });
});

describe("docs/server.md states the bounds the code declares", () => {
  it("every figure of REQUEST_LIMITS and RULE_CONTEXT_LIMITS is in its Request bounds section", () => {
    const doc = readFileSync(join(REPO_ROOT, "docs", "server.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Request bounds"), doc.indexOf("## Authentication"));
    const n = (value: number) => value.toLocaleString("en-US");
    const rows = section.split("\n").filter((line) => line.startsWith("| `") || line.startsWith("| every") || line.startsWith("| any"));
    const row = (start: string) => rows.find((line) => line.startsWith(start)) ?? `(no row ${start})`;
    expect(row("| every field")).toContain(`${REQUEST_LIMITS.maxDepth} levels`);
    expect(row("| `context.ruleContext`")).toContain(`${RULE_CONTEXT_LIMITS.maxDepth} levels, ${n(RULE_CONTEXT_LIMITS.maxChars)} characters`);
    expect(row("| any other part")).toContain(`${n(REQUEST_LIMITS.otherPartChars)} characters`);
    for (const [part, chars] of Object.entries(REQUEST_LIMITS.partChars)) {
      const line = rows.find((r) => r.split("|")[1].includes(`\`${part}\``)) ?? `(no row for ${part})`;
      expect(line, part).toContain(`| ${n(chars)} characters |`);
    }
  });
});
