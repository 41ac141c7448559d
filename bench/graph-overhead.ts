/**
 * Benchmark 2: framework overhead.
 *
 * 1. With an instant in-process model (no HTTP), interleaved rounds: the
 *    package's validation graph against the minimal two-node LangGraph graph
 *    making the same calls (its framework floor); `generateValidated` against
 *    a prebuilt graph's `invoke`; the Reflexion graph against a minimal
 *    LangGraph graph making the same model calls (its own floor).
 * 2. A CPU profile of the package's graph over HTTP at concurrency 1 (the
 *    scripted server in its own process): where the time goes, by disjoint
 *    buckets, and named pieces of work by inclusive time.
 * 3. An upstream cost stated and watched, not patched: whether `@langchain/core`
 *    still builds a langsmith `RunTree` for every runnable call with tracing off.
 */
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { isRunTree } from "langsmith/run_trees";
import { getCurrentRunTree } from "langsmith/singletons/traceable";
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import {
  compareRepeated,
  cpuUs,
  fmt,
  fmtLoad,
  fmtRatio,
  interleavedRounds,
  median,
  nowNs,
  outcomeBlocks,
  ratioStats,
  spread,
  table,
  type BenchOptions,
  type BenchResult,
  type MicroVariant,
  type RoundSample,
  type Target,
  runIfMain,
} from "./common.js";
import { compiled } from "./compiled.js";
import { lineStartingWith, spawnTs } from "./concurrency.js";
import { inclusiveTimes, profile, stackBreakdown, summarizeProfile, type BucketRule, type CallFrame, type Hotspot } from "./profile.js";

const ATTEMPTS_PER_RUN = 3;
const REQUEST = "A deployment config for payments-api with 8 replicas";
const REFLEXION_LOOPS = 3;

/** Named pieces of work whose inclusive share of the graph's profile is reported. Function names as they are in the installed code. */
const HOTSPOTS: Hotspot[] = [
  {
    label:
      "langsmith: `RunTree` constructor (langsmith/lib/run_trees.mjs) called from `runWithConfig` (@langchain/core singletons/async_local_storage), tracing off",
    functionName: "RunTree",
    urlIncludes: "langsmith/lib/run_trees",
    under: { functionName: "runWithConfig", urlIncludes: "@langchain/core/dist/singletons/async_local_storage" },
  },
  { label: "langsmith: `RunTree` constructor, from anywhere", functionName: "RunTree", urlIncludes: "langsmith/lib/run_trees" },
  {
    label: "@langchain/core: `getTraceableRunTree` (tracer_langchain.js; looks for a RunTree to trace under)",
    functionName: "getTraceableRunTree",
    urlIncludes: "@langchain/core",
  },
  { label: "@langchain/core: callback manager set-up (`_configureSync`)", functionName: "_configureSync", urlIncludes: "@langchain/core" },
  { label: "LangGraph: preparing the next tasks (`_prepareNextTasks`)", functionName: "_prepareNextTasks", urlIncludes: "@langchain/langgraph" },
  { label: "LangGraph: checkpoint object per step (`_putCheckpoint`), no checkpointer", functionName: "_putCheckpoint", urlIncludes: "@langchain/langgraph" },
  {
    label: "package: run configuration per node (`ensureValidationConfig`)",
    functionName: "ensureValidationConfig",
    urlIncludes: "src/validation/configuration",
  },
  { label: "package: parser (`extractJson`)", functionName: "extractJson", urlIncludes: "src/json/parse" },
  { label: "package: validator (`judgeSchemaAndRules`)", functionName: "judgeSchemaAndRules", urlIncludes: "src/specs/validate" },
];

const inLib = (frame: CallFrame, lib: string) => frame.url.includes(`/node_modules/${lib}/`);
/** Disjoint buckets of the profile, first match wins (see stackBreakdown); what no rule takes goes by its leaf's package. */
const BUCKETS: BucketRule[] = [
  { label: "garbage collection", where: "leaf", match: (f) => f.functionName === "(garbage collector)" },
  {
    label: "langsmith `RunTree` built per runnable call, tracing off (inclusive)",
    where: "stack",
    match: (f) => f.functionName === "RunTree" && f.url.includes("langsmith/lib/run_trees"),
  },
  { label: "the validator (inclusive)", where: "stack", match: (f) => f.functionName === "judgeSchemaAndRules" && f.url.includes("src/specs/validate") },
  {
    label: "LangGraph checkpoint objects built every step, no checkpointer (inclusive)",
    where: "stack",
    match: (f) =>
      ["_putCheckpoint", "createCheckpoint", "copyCheckpoint", "emptyCheckpoint"].includes(f.functionName) && f.url.includes("@langchain/langgraph"),
  },
  {
    label: "async-context hooks (AsyncLocalStorage, promise hooks)",
    where: "leaf",
    match: (f) =>
      /^node:(internal\/)?(async_hooks|async_local_storage|async_context_frame)/.test(f.url) || /^promise(Init|Before|After|Resolve)Hook$/.test(f.functionName),
  },
];
const BUCKET_OF_CATEGORY: Record<string, string> = {
  "@langchain/langgraph": "LangGraph step machinery",
  "@langchain/langgraph-checkpoint": "LangGraph step machinery",
  "@langchain/core": "LangChain config and callback plumbing",
  langsmith: "langsmith, other than the RunTree",
  "this package (src/)": "this package's own code",
  "Node.js internals": "HTTP stack and Node.js internals",
  openai: "HTTP stack and Node.js internals",
  "@langchain/openai": "HTTP stack and Node.js internals",
  "V8 builtins / native": "V8 builtins, native",
  "V8 (program)": "V8 (program)",
};

export async function run(opts: BenchOptions): Promise<BenchResult> {
  const inProcess = await inProcessRounds(opts);
  const overHttp = await profileOverHttp(opts);
  const runTree = await observeRunTrees(opts.quick ? 5 : 50);

  const rep = inProcess.samples;
  const perAttempt = (name: string) => rep.get(name)!.map((s) => s.cpuNs / 1000);
  const comparisons = [
    compareRepeated(
      "package graph vs its framework floor, in-process model: CPU per attempt",
      perAttempt(V.graph),
      perAttempt(V.floor),
      "µs",
      "minimal two-node LangGraph graph, same calls",
    ),
    compareRepeated(
      "generateValidated vs a prebuilt graph's invoke, in-process model: CPU per run",
      perAttempt(V.generate),
      perAttempt(V.prebuilt),
      "µs",
      "the compiled graph's invoke",
    ),
    compareRepeated(
      `Reflexion graph vs its minimal LangGraph floor, in-process model: CPU per model call`,
      perAttempt(V.reflexion),
      perAttempt(V.reflexionFloor),
      "µs",
      "minimal LangGraph graph, same model calls",
    ),
  ];
  const graphVsFloor = ratioStats(perAttempt(V.graph), perAttempt(V.floor));
  const runTreeShare = overHttp.hotspots[0].share;
  const generateVsPrebuilt = ratioStats(perAttempt(V.generate), perAttempt(V.prebuilt)).ratios;
  const targets: Target[] = [
    {
      description: "generateValidated within 1.02× of a prebuilt graph's invoke in CPU per run (in-process model)",
      met: median(generateVsPrebuilt) <= 1.02,
      detail: `${spread(generateVsPrebuilt, fmtRatio)} (median, min–max over ${generateVsPrebuilt.length} rounds), limit ${fmtRatio(1.02)}`,
    },
    {
      description: "upstream: `@langchain/core` builds no langsmith `RunTree` per runnable call with tracing off",
      met: runTree.perNodeCall === 0,
      detail:
        `${runTree.inRunTree} of ${runTree.nodeCalls} node calls ran inside a RunTree (${runTree.distinct} distinct objects, tracingEnabled ${runTree.tracingValues}); ` +
        `${(runTreeShare * 100).toFixed(1)}% of the package graph's CPU samples over HTTP are under its constructor (\`@langchain/core\` ${overHttp.versions.core}, langsmith ${overHttp.versions.langsmith})`,
    },
  ];
  const checks = [
    {
      description: `every timed in-process run ended as scripted (validation: valid after exactly ${ATTEMPTS_PER_RUN} attempts; Reflexion: ${REFLEXION_LOOPS} loops of 3 model calls)`,
      ok: inProcess.wrongRuns === 0,
      detail: `${inProcess.wrongRuns} wrong runs`,
    },
    {
      description: "every profiled run over HTTP ended valid after exactly 2 attempts",
      ok: overHttp.wrongRuns === 0,
      detail: `${overHttp.wrongRuns} wrong runs`,
    },
    {
      description: "the RunTree observation saw every node call (tracing off in this process)",
      ok: runTree.nodeCalls === runTree.expectedCalls && !runTree.tracingOn,
      detail: `${runTree.nodeCalls}/${runTree.expectedCalls} node calls`,
    },
  ];
  const rows = [
    ...[...rep.keys()].map((name) => ({ label: name, value: median(perAttempt(name)), unit: "µs" })),
    { label: "package graph over HTTP, CPU per attempt", value: overHttp.cpuPerAttemptUs, unit: "µs" },
    { label: "profiled CPU time over HTTP", value: overHttp.summary.totalMs, unit: "ms" },
  ];
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const markdown = [
    "## 2. Framework overhead",
    "",
    `### Machinery per attempt, in-process model`,
    "",
    `An instant in-process model (testkit/scripted-model.ts: a minimal BaseChatModel, recording off) answers invalid, invalid, valid, so every validation run makes ${ATTEMPTS_PER_RUN} attempts. ` +
      "Without HTTP, what is left is each client's own machinery. " +
      "The package's graph (`buildValidationGraph`) runs next to the minimal two-node LangGraph graph making the same calls (bench/peer-clients.ts `minimalValidationGraph`: the same prompts, model and validator; its framework floor), " +
      "next to `generateValidated` (which compiles its graph once per model) and a prebuilt graph's `invoke`, and next to a plain async loop making the same calls (bench/plain-loop.ts), shown for the absolute cost of the machinery only: " +
      "its in-process model call costs next to nothing, so a ratio to it says nothing a user meets (section 7 compares with loops over HTTP). " +
      `The Reflexion graph (one task, ${REFLEXION_LOOPS} loops, memory off: actor or refine, evaluator, reflector per loop, every evaluation scoring low so every loop runs) runs next to a minimal LangGraph graph ` +
      "making the same model calls with the same scripted models (act → evaluate → reflect → loop or end, Annotation state). " +
      `${inProcess.rounds} interleaved rounds, each running every variant once in a random order (${inProcess.runsPerRound} runs each); CPU time (\`process.cpuUsage()\`) per attempt (per model call for Reflexion), median (min–max) over the rounds, wall time beside it. ` +
      `The package is timed as compiled JavaScript (bench/compiled.ts). Load average (1 / 5 / 15 min): ${fmtLoad(inProcess.loadBefore)} before, ${fmtLoad(inProcess.loadAfter)} after.`,
    "",
    table(
      ["variant", "CPU µs per attempt (Reflexion: per model call)", "wall µs", "÷ its floor, per round"],
      [
        [V.graph, spread(perAttempt(V.graph)), fmt(median(rep.get(V.graph)!.map((s) => s.wallNs / 1000))), spread(graphVsFloor.ratios, fmtRatio)],
        [V.floor, spread(perAttempt(V.floor)), fmt(median(rep.get(V.floor)!.map((s) => s.wallNs / 1000))), "—"],
        [V.loop, spread(perAttempt(V.loop)), fmt(median(rep.get(V.loop)!.map((s) => s.wallNs / 1000))), "—"],
        [
          V.generate,
          spread(perAttempt(V.generate)),
          fmt(median(rep.get(V.generate)!.map((s) => s.wallNs / 1000))),
          spread(ratioStats(perAttempt(V.generate), perAttempt(V.prebuilt)).ratios, fmtRatio) + " (÷ prebuilt invoke)",
        ],
        [V.prebuilt, spread(perAttempt(V.prebuilt)), fmt(median(rep.get(V.prebuilt)!.map((s) => s.wallNs / 1000))), "—"],
        [
          V.reflexion,
          spread(perAttempt(V.reflexion)),
          fmt(median(rep.get(V.reflexion)!.map((s) => s.wallNs / 1000))),
          spread(ratioStats(perAttempt(V.reflexion), perAttempt(V.reflexionFloor)).ratios, fmtRatio),
        ],
        [V.reflexionFloor, spread(perAttempt(V.reflexionFloor)), fmt(median(rep.get(V.reflexionFloor)!.map((s) => s.wallNs / 1000))), "—"],
      ],
    ),
    "",
    `The minimal LangGraph graph costs ${fmt(median(perAttempt(V.floor)) - median(perAttempt(V.loop)))} µs per attempt more than the plain loop making the same calls: LangGraph's and LangChain's machinery, upstream of this package. ` +
      `The package's graph costs ${fmt(Math.abs(median(perAttempt(V.graph)) - median(perAttempt(V.floor))))} µs per attempt ${median(perAttempt(V.graph)) >= median(perAttempt(V.floor)) ? "more" : "less"} than that floor (medians; what it adds: the settings fixed on the edge from START, usage ledger, attempt records, front-door checks, more state channels; what it saves: no routing function per attempt, as validate routes with Command, and no callback manager or RunTree for its generate and validate nodes and the edge from START, which run as plain calls). ` +
      "`generateValidated` and the prebuilt `invoke` run the same compiled graph, so their ratio is the cost of the function around it (the settings it builds per call).",
    "",
    outcomeBlocks(comparisons, targets, checks),
    "",
    `### Where the graph's time goes (over HTTP, one run at a time)`,
    "",
    `The package's graph (built as in section 7: \`buildValidationGraph\` with \`createChatModel\`) in a fresh process of its own, against the scripted server without latency (another process), after a warm-up of ${overHttp.warmup} runs: ` +
      `${overHttp.timedRuns} runs timed (${fmt(overHttp.cpuPerAttemptUs)} µs CPU per attempt in that process), then ${overHttp.profiledRuns} runs (${overHttp.profiledRuns * 2} attempts) under V8's sampling profiler (node:inspector, 100 µs interval; ` +
      `the profile \`node --cpu-prof\` writes, limited to those runs), ${fmt(overHttp.summary.totalMs)} ms of samples. Load average: ${fmtLoad(overHttp.loadBefore)} before, ${fmtLoad(overHttp.loadAfter)} after.`,
    "",
    "Every sample in exactly one bucket: the first rule that matches its stack (garbage collection; a `RunTree` constructor anywhere on the stack; the validator; LangGraph's checkpoint functions; async-context hooks as the leaf), " +
      "else the package of its leaf frame, a V8 builtin counting as the JavaScript that called it. So the RunTree, validator and checkpoint rows are inclusive of what they call, and the rows add up to 100%:",
    "",
    table(
      ["where", "share of CPU samples", "≈ µs per attempt"],
      overHttp.buckets.map((b) => [b.label, pct(b.share), fmt(b.share * overHttp.cpuPerAttemptUs)]),
    ),
    "",
    "Inclusive time of named pieces of work (a sample counts for every piece on its stack, so pieces can nest and shares do not add up; the sampling profiler sees only the synchronous part of async functions):",
    "",
    table(
      ["work", "share of CPU samples", "≈ µs per attempt"],
      overHttp.hotspots.map((h) => [h.label, pct(h.share), fmt(h.share * overHttp.cpuPerAttemptUs)]),
    ),
    "",
    "Top functions by self time:",
    "",
    table(
      ["function", "where", "package", "self ms", "share"],
      overHttp.summary.functions.map((f) => [f.name, f.location || "—", f.category, fmt(f.selfMs), pct(f.share)]),
    ),
    "",
    "### Upstream: a langsmith `RunTree` per runnable call, tracing off",
    "",
    `\`@langchain/core\` ${overHttp.versions.core} runs every runnable call through \`AsyncLocalStorageProvider.runWithConfig\`, which builds \`new RunTree({ name: "<runnable_lambda>", tracingEnabled: false })\` ` +
      "(langsmith: a UUIDv7 from the crypto RNG, a microsecond timestamp string, environment look-ups) for every node, router and channel write, whether or not anything traces. " +
      "No setting turns it off in this version, and an upstream change to skip it was proposed and not merged, so the package does not patch it. " +
      `Watched here: a minimal graph with tracing off asks langsmith's \`getCurrentRunTree\` (a public export) inside each of ${runTree.expectedCalls} node calls: ` +
      `${runTree.inRunTree} ran inside a RunTree, ${runTree.distinct} distinct objects (one built per call), tracingEnabled ${runTree.tracingValues}. ` +
      `Its constructor holds ${pct(runTreeShare)} of the package graph's CPU samples over HTTP (≈ ${fmt(runTreeShare * overHttp.cpuPerAttemptUs)} µs per attempt). ` +
      "The target above turns to met, and these figures to zero, on the day an upgrade stops building it.",
  ].join("\n");

  return { id: "overhead", title: "Framework overhead", rows, comparisons, targets, checks, markdown };
}

/** Variant names, as the table and rows show them. */
const V = {
  graph: "package validation graph (`buildValidationGraph`), per attempt",
  floor: "minimal two-node LangGraph graph, same calls, per attempt",
  loop: "plain async loop, same calls, per attempt",
  generate: "`generateValidated`, per run",
  prebuilt: "prebuilt graph's `invoke`, per run",
  reflexion: "Reflexion graph, per model call",
  reflexionFloor: "minimal LangGraph graph with the same model calls, per model call",
} as const;

async function inProcessRounds(opts: BenchOptions) {
  // The package, the plain loop and the model as compiled JavaScript (see bench/compiled.ts).
  const { builtinSpecs } = await compiled<typeof import("../src/specs/registry.js")>("src/specs/registry");
  const { buildValidationGraph } = await compiled<typeof import("../src/validation/graph.js")>("src/validation/graph");
  const { generateValidated } = await compiled<typeof import("../src/validation/generate.js")>("src/validation/generate");
  const { generationSystemPrompt } = await compiled<typeof import("../src/validation/prompts.js")>("src/validation/prompts");
  const { buildReflexionGraph } = await compiled<typeof import("../src/reflexion/graph.js")>("src/reflexion/graph");
  const { ScriptedChatModel } = await compiled<typeof import("../testkit/scripted-model.js")>("testkit/scripted-model");
  const { plainValidationLoop } = await compiled<typeof import("./plain-loop.js")>("bench/plain-loop");
  const { minimalValidationGraph } = await compiled<typeof import("./peer-clients.js")>("bench/peer-clients");
  const spec = builtinSpecs.get("deployment-config");
  if (!spec) throw new Error("deployment-config spec missing");
  const valid = JSON.stringify(spec.example);
  const brokenRules = JSON.stringify({
    ...(spec.example as object),
    replicas: 8,
    health_check: { path: "/healthz", timeout_seconds: 30, interval_seconds: 10 },
  });
  const brokenSchema = JSON.stringify({ service_name: "Payments API", replicas: "8", resources: { cpu_limit: 0.5 } });
  // Every run: two invalid answers, then a valid one: three attempts. Each variant has its own model, so each stays in step.
  const answers = [brokenSchema, brokenRules, valid];
  const model = () => new ScriptedChatModel({ answers, repeat: true, record: false });
  const context = { spec: "deployment-config", maxAttempts: ATTEMPTS_PER_RUN };

  const graph = buildValidationGraph({ model: model() });
  const floor = minimalValidationGraph(model(), spec, generationSystemPrompt(spec), ATTEMPTS_PER_RUN);
  const loopModel = model();
  const generateModel = model();
  const prebuilt = buildValidationGraph({ model: model() });

  // Reflexion: every evaluation scores low, so each task runs all its loops; one model per role, shared by the graph and its floor's own copies.
  const text = (what: string) => `${what}: ` + "lorem ipsum dolor sit amet ".repeat(8);
  let reflexionCalls = 0;
  let floorCalls = 0;
  const roleModel = (role: string, count: () => void) =>
    new ScriptedChatModel({
      answers: [() => (count(), role === "evaluator" ? `${text("evaluation")}\nFinal score: 3` : text(role))],
      repeat: true,
      record: false,
    });
  const reflexionModels = new Map<string, InstanceType<typeof ScriptedChatModel>>();
  const reflexion = buildReflexionGraph({
    model: (request) => {
      let m = reflexionModels.get(request.role);
      if (!m) reflexionModels.set(request.role, (m = roleModel(request.role, () => reflexionCalls++)));
      return m;
    },
  });
  const floorModels = {
    actor: roleModel("actor", () => floorCalls++),
    evaluator: roleModel("evaluator", () => floorCalls++),
    reflector: roleModel("reflector", () => floorCalls++),
  };
  const ReflexionFloorState = Annotation.Root({
    task: Annotation<string>(),
    response: Annotation<string>(),
    evaluation: Annotation<string>(),
    reflections: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
    loops: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  });
  type FloorState = typeof ReflexionFloorState.State;
  const reflexionFloor = new StateGraph(ReflexionFloorState)
    .addNode("act", async (s: FloorState) => {
      const answer = await floorModels.actor.invoke([new SystemMessage("Answer the task."), new HumanMessage(`${s.task}\n${s.reflections.join("\n")}`)]);
      return { response: String(answer.content) };
    })
    .addNode("evaluate", async (s: FloorState) => {
      const answer = await floorModels.evaluator.invoke([new SystemMessage("Evaluate the answer."), new HumanMessage(`${s.task}\n${s.response}`)]);
      return { evaluation: String(answer.content) };
    })
    .addNode("reflect", async (s: FloorState) => {
      const answer = await floorModels.reflector.invoke([new SystemMessage("Reflect on the evaluation."), new HumanMessage(`${s.response}\n${s.evaluation}`)]);
      return { reflections: [String(answer.content)], loops: 1 };
    })
    .addEdge(START, "act")
    .addEdge("act", "evaluate")
    .addEdge("evaluate", "reflect")
    .addConditionalEdges("reflect", (s: FloorState) => (s.loops >= REFLEXION_LOOPS ? END : "act"), ["act", END])
    .compile();

  let wrongRuns = 0;
  const expectAttempts = (attempts: unknown, success: unknown) => {
    if (success !== true || attempts !== ATTEMPTS_PER_RUN) wrongRuns++;
  };
  /** A variant running `runs` runs per round; its sample is per attempt (per model call for Reflexion). */
  const variant = (name: string, unitsPerRun: number, one: (i: number) => Promise<void>): MicroVariant => ({
    name,
    passes: opts.quick ? 2 : 20,
    round: async (runs): Promise<RoundSample> => {
      const wall0 = nowNs();
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < runs; i++) await one(i);
      const units = runs * unitsPerRun;
      return { cpuNs: (cpuUs(cpu0) * 1000) / units, wallNs: (nowNs() - wall0) / units };
    },
  });
  const variants: MicroVariant[] = [
    variant(V.graph, ATTEMPTS_PER_RUN, async () => {
      const out = await graph.invoke({ request: REQUEST }, { context });
      expectAttempts(out.attempts, out.success);
    }),
    variant(V.floor, ATTEMPTS_PER_RUN, async () => {
      const out = await floor.invoke({ request: REQUEST });
      expectAttempts(out.attempts, out.valid);
    }),
    variant(V.loop, ATTEMPTS_PER_RUN, async () => {
      const out = await plainValidationLoop(loopModel, spec, REQUEST, ATTEMPTS_PER_RUN);
      expectAttempts(out.attempts, out.success);
    }),
    variant(V.generate, 1, async () => {
      const out = await generateValidated({ model: generateModel, spec: "deployment-config", request: REQUEST, maxAttempts: ATTEMPTS_PER_RUN });
      expectAttempts(out.attempts, out.success);
    }),
    variant(V.prebuilt, 1, async () => {
      const out = await prebuilt.invoke({ request: REQUEST }, { context });
      expectAttempts(out.attempts, out.success);
    }),
    variant(V.reflexion, 3 * REFLEXION_LOOPS, async (i) => {
      const before = reflexionCalls;
      const out = await reflexion.invoke({ tasks: [`Task ${i}: explain topic number ${i}`] }, { context: { maxLoops: REFLEXION_LOOPS, useMemory: false } });
      if (reflexionCalls - before !== 3 * REFLEXION_LOOPS || out.outcomes[0]?.iterations !== REFLEXION_LOOPS) wrongRuns++;
    }),
    variant(V.reflexionFloor, 3 * REFLEXION_LOOPS, async (i) => {
      const before = floorCalls;
      await reflexionFloor.invoke({ task: `Task ${i}: explain topic number ${i}` });
      if (floorCalls - before !== 3 * REFLEXION_LOOPS) wrongRuns++;
    }),
  ];
  const rounds = opts.quick ? 2 : 15;
  // Warm-up: load and optimise every variant's code.
  for (const v of variants) await v.round(opts.quick ? 3 : 150);
  wrongRuns = 0;
  const loadBefore = loadavg();
  const samples = await interleavedRounds(variants, { rounds, roundMs: 0, warmupRounds: opts.quick ? 0 : 1 });
  return { samples, rounds, runsPerRound: opts.quick ? 2 : 20, wrongRuns, loadBefore, loadAfter: loadavg() };
}

/** The profile over HTTP, in a fresh process of its own (a process that has run the other variants carries their heap and type feedback). */
async function profileOverHttp(opts: BenchOptions): Promise<HttpProfile> {
  const server = spawnTs("./model-server.ts", ["--port", "0", "--latency-ms", "0", "--mode", "invalid-then-valid"]);
  try {
    const baseUrl = await lineStartingWith(server, "READY ", 30_000);
    const worker = spawnTs("./graph-overhead.ts", ["--profile-worker", "--url", baseUrl, ...(opts.quick ? ["--quick"] : [])]);
    try {
      return JSON.parse(await lineStartingWith(worker, "RESULT ", 600_000)) as HttpProfile;
    } finally {
      if (worker.exitCode === null) worker.kill();
    }
  } finally {
    server.stdin?.end();
    if (server.exitCode === null) server.kill();
  }
}

type HttpProfile = Awaited<ReturnType<typeof profileWorker>>;

async function profileWorker(baseUrl: string, quick: boolean) {
  const { makePeer } = await compiled<typeof import("./peer-clients.js")>("bench/peer-clients");
  const graphRun = makePeer("package-graph", baseUrl);
  let wrongRuns = 0;
  const runs = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const out = await graphRun(i);
      if (!out.success || out.attempts !== 2) wrongRuns++;
    }
  };
  const warmup = quick ? 3 : 200;
  const timedRuns = quick ? 5 : 200;
  const profiledRuns = quick ? 5 : 300;
  await runs(warmup);
  const loadBefore = loadavg();
  const cpu0 = process.cpuUsage();
  await runs(timedRuns);
  const cpuPerAttemptUs = cpuUs(cpu0) / (timedRuns * 2);
  const { profile: cpu } = await profile(() => runs(profiledRuns));
  const loadAfter = loadavg();
  const summary = summarizeProfile(cpu, 15);
  const hotspots = inclusiveTimes(cpu, HOTSPOTS);
  const buckets = stackBreakdown(cpu, BUCKETS, (category) => BUCKET_OF_CATEGORY[category] ?? `other: ${category}`);
  const require = createRequire(import.meta.url);
  const versions = {
    core: (require("@langchain/core/package.json") as { version: string }).version,
    langsmith: (require("langsmith/package.json") as { version: string }).version,
  };
  return { summary, hotspots, buckets, cpuPerAttemptUs, warmup, timedRuns, profiledRuns, wrongRuns, loadBefore, loadAfter, versions };
}

/**
 * Whether each runnable call still runs inside a RunTree built for it with tracing off: a minimal graph whose
 * nodes ask langsmith's `getCurrentRunTree` (a public export; it reads the async-context store LangChain fills)
 * which object they run in. Nothing is wrapped or patched.
 */
async function observeRunTrees(runs: number) {
  const seen: unknown[] = [];
  const look = () => {
    seen.push(getCurrentRunTree(true));
    return {};
  };
  const State = Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });
  const graph = new StateGraph(State)
    .addNode("first", () => (look(), { n: 1 }))
    .addNode("second", () => (look(), { n: 1 }))
    .addEdge(START, "first")
    .addEdge("first", "second")
    .addEdge("second", END)
    .compile();
  for (let i = 0; i < runs; i++) await graph.invoke({ n: 0 });
  const trees = seen.filter((x) => isRunTree(x)) as { tracingEnabled?: unknown }[];
  const tracing = new Set(trees.map((t) => String(t.tracingEnabled)));
  return {
    expectedCalls: runs * 2,
    nodeCalls: seen.length,
    inRunTree: trees.length,
    distinct: new Set(trees).size,
    perNodeCall: seen.length > 0 ? new Set(trees).size / seen.length : 0,
    tracingValues: tracing.size > 0 ? [...tracing].join("/") : "—",
    tracingOn: tracing.has("true"),
  };
}

async function main(argv: string[]): Promise<void> {
  const at = argv.indexOf("--url");
  if (!argv.includes("--profile-worker") || at < 0) throw new Error("usage: graph-overhead.ts --profile-worker --url URL [--quick]");
  process.stdout.write(`RESULT ${JSON.stringify(await profileWorker(argv[at + 1], argv.includes("--quick")))}\n`);
}

runIfMain(import.meta.url, main, { exitWhenDone: true });
