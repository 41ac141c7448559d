/**
 * CPU profiling of a piece of code in this process (V8's sampling profiler,
 * through the inspector: the same profile `node --cpu-prof` writes, limited
 * to the code under study), and a summary of where the time went: self time
 * per function and per package.
 */
import { Session } from "node:inspector/promises";
import { fileURLToPath } from "node:url";

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface SelfTime {
  name: string;
  location: string;
  category: string;
  selfMs: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  functions: SelfTime[];
  categories: { category: string; selfMs: number; share: number }[];
}

export async function profile<T>(fn: () => Promise<T>, samplingIntervalUs = 100): Promise<{ result: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
    await session.post("Profiler.start");
    let result: T;
    try {
      result = await fn();
    } catch (error) {
      await session.post("Profiler.stop");
      throw error;
    }
    const stopped = (await session.post("Profiler.stop")) as unknown as { profile: CpuProfile };
    return { result, profile: stopped.profile };
  } finally {
    session.disconnect();
  }
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** A compiled copy's path (bench/.cache/js-…/src/x.js) as its source's (src/x.js). */
function stripCache(path: string): string {
  return path.replace(/^bench\/\.cache\/js-[0-9a-f]+\//, "");
}

/** Which package (or part of the runtime) a script URL belongs to. */
export function categoryOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (url === "") {
    if (functionName === "(garbage collector)") return "garbage collection";
    if (functionName === "(idle)") return "idle";
    if (functionName === "(program)") return "V8 (program)";
    return "V8 builtins / native";
  }
  const path = url.startsWith("file://") ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf("/node_modules/");
  if (nm >= 0) {
    const rest = path.slice(nm + "/node_modules/".length).split("/");
    return rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (path.startsWith("node:") || !path.startsWith("/")) return "Node.js internals";
  const local = stripCache(path.startsWith(ROOT) ? path.slice(ROOT.length) : path);
  if (local.startsWith("src/")) return "this package (src/)";
  if (local.startsWith("bench/")) return "benchmark harness (bench/)";
  return "other";
}

function shortLocation(frame: CallFrame): string {
  if (frame.url === "") return "";
  const path = frame.url.startsWith("file://") ? fileURLToPath(frame.url) : frame.url;
  const nm = path.lastIndexOf("/node_modules/");
  const short = nm >= 0 ? path.slice(nm + "/node_modules/".length) : stripCache(path.startsWith(ROOT) ? path.slice(ROOT.length) : path);
  return `${short}:${frame.lineNumber + 1}`;
}

function isIdle(node: ProfileNode | undefined): boolean {
  return node?.callFrame.functionName === "(idle)" && node.callFrame.url === "";
}

export function summarizeProfile(p: CpuProfile, top = 15): ProfileSummary {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) {
    // Idle is time the process waited (for the server, a timer): not CPU time.
    if (isIdle(byId.get(samples[i]))) continue;
    // timeDeltas[i] is the time since the previous sample; attribute the interval to the sample that ends it.
    const d = deltas[i + 1] ?? 0;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, d));
  }
  const perFunction = new Map<string, SelfTime>();
  const perCategory = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const category = categoryOf(node.callFrame);
    const location = shortLocation(node.callFrame);
    const name = node.callFrame.functionName || "(anonymous)";
    const key = `${name}\u0000${location}`;
    const entry = perFunction.get(key) ?? { name, location, category, selfMs: 0, share: 0 };
    entry.selfMs += us / 1000;
    perFunction.set(key, entry);
    perCategory.set(category, (perCategory.get(category) ?? 0) + us / 1000);
    total += us / 1000;
  }
  const functions = [...perFunction.values()].sort((a, b) => b.selfMs - a.selfMs);
  for (const f of functions) f.share = total > 0 ? f.selfMs / total : 0;
  const categories = [...perCategory.entries()]
    .map(([category, selfMs]) => ({ category, selfMs, share: total > 0 ? selfMs / total : 0 }))
    .sort((a, b) => b.selfMs - a.selfMs);
  return { totalMs: total, functions: functions.slice(0, top), categories };
}

export interface Hotspot {
  label: string;
  /** Matches a profile frame: function name, and a substring of its script URL. */
  functionName: string;
  urlIncludes: string;
  /** Count only a matching frame that has this frame somewhere above it (its caller, or theirs). */
  under?: { functionName: string; urlIncludes: string };
}

/**
 * Inclusive time of each hotspot (samples with a matching frame anywhere on
 * their stack; a sample counts once per hotspot even under recursion).
 */
export function inclusiveTimes(p: CpuProfile, hotspots: readonly Hotspot[]): { label: string; ms: number; share: number }[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const frameIs = (id: number | undefined, m: { functionName: string; urlIncludes: string }) => {
    const f = id === undefined ? undefined : byId.get(id)?.callFrame;
    return f !== undefined && f.functionName === m.functionName && f.url.includes(m.urlIncludes);
  };
  const matches = (id: number, h: Hotspot) => {
    if (!frameIs(id, h)) return false;
    if (!h.under) return true;
    for (let up = parent.get(id); up !== undefined; up = parent.get(up)) if (frameIs(up, h.under)) return true;
    return false;
  };
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  const totals = hotspots.map(() => 0);
  let all = 0;
  for (let i = 0; i < samples.length; i++) {
    if (isIdle(byId.get(samples[i]))) continue;
    const d = Math.max(0, deltas[i + 1] ?? 0);
    all += d;
    hotspots.forEach((h, k) => {
      for (let cur: number | undefined = samples[i]; cur !== undefined; cur = parent.get(cur)) {
        if (matches(cur, h)) {
          totals[k] += d;
          return;
        }
      }
    });
  }
  return hotspots.map((h, k) => ({ label: h.label, ms: totals[k] / 1000, share: all > 0 ? totals[k] / all : 0 }));
}

/** One bucket of a profile's breakdown: samples attributed to it, and their share of all samples. */
export interface Bucket {
  label: string;
  ms: number;
  share: number;
}

/**
 * A rule of the breakdown: a sample whose stack holds a matching frame (anywhere, or as its leaf) goes to
 * the bucket. Rules are tried in order; the first that matches wins, so buckets are disjoint.
 */
export interface BucketRule {
  label: string;
  /** Where the matching frame may be: anywhere on the stack (inclusive), or the leaf's own frame. */
  where: "stack" | "leaf";
  match: (frame: CallFrame) => boolean;
}

/**
 * Every sample in exactly one bucket: the first rule that matches its stack, else the package of its
 * leaf frame, where a frame without a script (a V8 builtin, "(program)") counts as its nearest caller's.
 * The shares add up to 100%.
 */
export function stackBreakdown(p: CpuProfile, rules: readonly BucketRule[], categoryLabel: (category: string) => string = (c) => c): Bucket[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  const totals = new Map<string, number>();
  const cache = new Map<number, string>();
  let all = 0;
  /** The frame a sample is charged to: its leaf, or for a V8 builtin or native frame, the nearest JavaScript that called it. */
  const effectiveLeaf = (leaf: number): number => {
    let cur = leaf;
    for (;;) {
      const frame = byId.get(cur)!.callFrame;
      if (frame.url !== "" || frame.functionName.startsWith("(")) return cur;
      const up = parent.get(cur);
      if (up === undefined || byId.get(up)!.callFrame.functionName === "(root)") return cur;
      cur = up;
    }
  };
  const bucketOf = (leaf: number): string => {
    const known = cache.get(leaf);
    if (known !== undefined) return known;
    const charged = effectiveLeaf(leaf);
    let label: string | undefined;
    for (const rule of rules) {
      if (rule.where === "leaf") {
        if (rule.match(byId.get(leaf)!.callFrame) || rule.match(byId.get(charged)!.callFrame)) label = rule.label;
      } else {
        for (let cur: number | undefined = leaf; cur !== undefined && label === undefined; cur = parent.get(cur))
          if (rule.match(byId.get(cur)!.callFrame)) label = rule.label;
      }
      if (label !== undefined) break;
    }
    label ??= categoryLabel(categoryOf(byId.get(charged)!.callFrame));
    cache.set(leaf, label);
    return label;
  };
  for (let i = 0; i < samples.length; i++) {
    if (isIdle(byId.get(samples[i]))) continue;
    const d = Math.max(0, deltas[i + 1] ?? 0);
    all += d;
    const label = bucketOf(samples[i]);
    totals.set(label, (totals.get(label) ?? 0) + d);
  }
  return [...totals.entries()].map(([label, us]) => ({ label, ms: us / 1000, share: all > 0 ? us / all : 0 })).sort((a, b) => b.ms - a.ms);
}
