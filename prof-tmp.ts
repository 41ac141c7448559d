import { buildValidationGraph } from "./src/validation/graph.js";
import { configureTelemetry } from "./src/telemetry/open-telemetry.js";
import { builtinSpecs } from "./src/specs/registry.js";
import { ScriptedChatModel } from "./testkit/scripted-model.js";
const valid = builtinSpecs.get("deployment-config")!.example as Record<string, unknown>;
const graph = buildValidationGraph({ model: new ScriptedChatModel({ answers: [JSON.stringify({ ...valid, replicas: 8 }), JSON.stringify(valid)], repeat: true, record: false }) });
const request = { request: "A deployment config for payments-api with 8 replicas" };
const gc = (globalThis as any).gc;
async function block(enabled: boolean, runs: number) { configureTelemetry({ enabled }); gc?.({ type: "minor" }); const t = process.cpuUsage(); for (let i = 0; i < runs; i++) await graph.invoke(request); const d = process.cpuUsage(t); return (d.user + d.system) / runs; }
for (let i = 0; i < 30; i++) { await block(false, 10); await block(true, 10); }
const r: number[] = [];
for (let c = 0; c < 300; c++) { const first = c % 2 === 0; const a = first ? await block(false, 10) : 0; const b = await block(true, 10); const a2 = first ? a : await block(false, 10); r.push(b / a2); }
r.sort((x, y) => x - y); console.log("median no-SDK/off", r[150].toFixed(4), "iqr", r[75].toFixed(3), r[225].toFixed(3));
