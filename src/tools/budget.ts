/**
 * A guarded tool's attempt budget, read from the conversation itself: the
 * failed calls are the tool's own "not run" results in the run's messages
 * since the user last wrote. Nothing is kept in process memory beyond what is
 * attached (weakly) to the message objects themselves, so two threads (or two
 * users on one server) never share a count, a checkpointed thread keeps its
 * count across restarts and workers, and memory use does not grow with the
 * number of runs. Pure: no model, no graph.
 *
 * Tool-call ids are not trusted to tell calls apart: some OpenAI-compatible
 * servers number calls per message (call_0, call_1, … in every message) or
 * send none, and LangChain passes a missing id on as it is. ToolNode hands the
 * tool a copy of the call, not the AI message's entry, so the call is located
 * by position: in the last AI message that calls the tool, the entry with its
 * name, id and (JSON-equal) arguments. A result is matched to its call by the
 * call index in its guard record, else by name, id and order. Calls nothing
 * can tell apart (same name, id and arguments in one message) take the
 * positions in turn and, if valid, share the strictest verdict.
 */

/** Where a guarded tool marks the results of calls it did not run (in ToolMessage.artifact). */
export const GUARD_ARTIFACT_KEY = "guardedTool";

/** What a guarded tool records on the result of a call it did not run. */
export interface GuardRecord {
  /** "invalid": the arguments failed the spec; "refused": the budget was already spent, nothing was checked. */
  outcome: "invalid" | "refused";
  spec: string;
  /** 1-based number of the call among the attempts the budget counts. */
  attempt: number;
  maxAttempts: number;
  /** The validator's messages, exactly as the model received them (empty for a refusal). */
  errors: string[];
  /** 0-based index of the call among the tool calls of the AI message that made it, when the tool located it: matches the result to its call whatever the ids. */
  callIndex?: number;
}

/** The guard record of a tool result, when a guarded tool did not run that call. */
export function guardRecordOf(message: unknown): GuardRecord | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const artifact = (message as { artifact?: unknown }).artifact;
  if (artifact === null || typeof artifact !== "object") return undefined;
  const record = (artifact as Record<string, unknown>)[GUARD_ARTIFACT_KEY] as GuardRecord | undefined;
  return record && (record.outcome === "invalid" || record.outcome === "refused") ? record : undefined;
}

/** A tool call as a tool receives it (LangChain's `runtime.toolCall`; ToolNode hands over a copy of the AI message's entry). */
export interface ToolCallRef {
  id?: string | null;
  name: string;
  args?: unknown;
}

interface BudgetQuery {
  tool: string;
  /** The call being decided. When it is missing, or the last AI message calling this tool does not hold it, it is counted as coming after every call so far. */
  call?: ToolCallRef;
  maxAttempts: number;
  /** Whether a call's arguments pass the spec (for calls made alongside this one, whose results are not in the messages yet). */
  passes: (args: unknown) => boolean;
  /** One per tool: what is worked out for an AI message is kept with that message object, so its parallel calls judge each call once. */
  memo?: BudgetMemo;
}

interface BudgetDecision {
  /** This tool's failed calls in a row before this one; at maxAttempts or more the call is refused. */
  failures: number;
  /** Where the call sits among its AI message's tool calls, for the guard record; undefined when it was not located. */
  callIndex?: number;
}

/** One tool's memory of the AI messages it has examined, weakly keyed by the message objects (gone with them). Make one per tool. */
export class BudgetMemo {
  /** @internal */
  readonly facts = new WeakMap<object, Map<string, MessageFacts>>();
}

type Outcome = "failed" | "ran";

interface CallFacts {
  /** The id, or undefined when missing or empty (ToolNode gives "" for a missing id). */
  id: string | undefined;
  name: string;
  args: unknown;
}

/** What one AI message's tool calls are, for one tool; worked out once per message object. */
interface MessageFacts {
  calls: CallFacts[];
  /** Positions of this tool's calls, in order. */
  own: number[];
  /** Per own position (by order): the first own-order index of its group, calls alike in name, id and arguments. */
  group: number[];
  /** Per own position: the arguments as JSON (undefined when they cannot be written out). */
  keys: Array<string | undefined>;
  /** Own-order indexes of each group's members. */
  members: Map<number, number[]>;
  /** The group of each id-and-arguments pair (for arguments that can be written out). */
  groupOf: Map<string, number>;
  /** Per group: whether its arguments pass the spec, validated at most once. */
  verdicts: Map<number, boolean>;
  /** The asynchronous judging of every group (judgeAlongside), shared by the message's parallel calls. */
  judging?: Promise<unknown>;
  /** Per group: how many of its calls have located themselves, so alike calls take its positions in turn. */
  claims: Map<number, number>;
  /** The outcomes read from the results that followed the message, kept while those results are the same objects. */
  settled?: { results: unknown[]; outcomes: Outcome[] };
  plan?: { key: string; plan: Plan };
}

interface Plan {
  /** Per own position (by order): this tool's failures in a row before it. */
  counts: number[];
  /** After the message's last call. */
  end: number;
  /** Valid groups refused as a whole, because one of their calls would be refused. */
  forced: Set<number>;
}

/**
 * Judge, with the asynchronous check step, the calls a decision may need to count as they will be
 * judged: this tool's calls in the last AI message that calls it. Done once per message (its
 * parallel calls share it); decideBudget then reads these verdicts, so a spec whose rules are
 * asynchronous is counted as it is judged, not refused by the synchronous check that cannot wait.
 */
export async function judgeAlongside(messages: unknown, tool: string, memo: BudgetMemo, check: (args: unknown) => Promise<boolean>): Promise<void> {
  if (!Array.isArray(messages)) return;
  for (let i = messages.length - 1; i >= 0; i--) {
    const type = typeOf(messages[i]);
    if (type === "human") return;
    if (type !== "ai") continue;
    const facts = factsOf(messages[i] as object, tool, memo);
    if (facts.own.length === 0) continue;
    const groups = [...new Set(facts.group)];
    facts.judging ??= Promise.all(groups.map(async (g) => facts.verdicts.set(g, await check(facts.calls[facts.own[g]].args))));
    await facts.judging;
    return;
  }
}

/**
 * How many of this tool's calls failed in a row, since the last human message,
 * before the call being decided, and where that call sits. A call that ran
 * resets the count; once the count reaches the budget every later call counts
 * as failed (it is refused). Earlier messages are counted from their results;
 * the calls of the call's own message run alongside it, so they are judged
 * with the same check and numbered as if made one after another.
 */
export function decideBudget(messages: unknown, query: BudgetQuery): BudgetDecision {
  // Outside a conversation (a direct invoke) there is nothing to count.
  if (!Array.isArray(messages)) return { failures: 0 };
  const memo = query.memo ?? new BudgetMemo();
  let start = messages.length;
  while (start > 0 && typeOf(messages[start - 1]) !== "human") start--;

  // Each AI message of the turn with the results that follow it.
  const segments: Array<{ message: object; results: unknown[] }> = [];
  const orphans: unknown[] = [];
  for (let i = start; i < messages.length; i++) {
    const type = typeOf(messages[i]);
    if (type === "ai") segments.push({ message: messages[i] as object, results: [] });
    else if (type === "tool") (segments.at(-1)?.results ?? orphans).push(messages[i]);
  }

  const located = locate(segments, query, memo);
  const next = (failures: number, outcome: Outcome) => (failures >= query.maxAttempts || outcome === "failed" ? failures + 1 : 0);
  let failures = 0;
  for (const result of orphans) if (nameOf(result) === query.tool) failures = next(failures, guardRecordOf(result) ? "failed" : "ran");
  const until = located?.segment ?? segments.length - 1;
  for (let s = 0; s < until; s++) {
    const facts = factsOf(segments[s].message, query.tool, memo);
    for (const outcome of outcomesOf(facts, segments[s].results, query.tool)) failures = next(failures, outcome);
  }
  if (until < 0) return { failures };

  // The message holding the call: results already there count as they are, the other calls as they will be judged.
  const segment = segments[until];
  const facts = factsOf(segment.message, query.tool, memo);
  const known = attribute(facts, segment.results);
  for (const result of known.unplaced) if (nameOf(result) === query.tool) failures = next(failures, guardRecordOf(result) ? "failed" : "ran");
  const resultIds = new Set<string>();
  for (const m of messages)
    if (typeOf(m) === "tool" && typeof (m as { tool_call_id?: unknown }).tool_call_id === "string") resultIds.add((m as { tool_call_id: string }).tool_call_id);
  // ToolNode (and createReactAgent v1) skips a call whose id already has a result: such a call may never run, so it resets nothing.
  const mayBeSkipped = facts.own.map((p) => facts.calls[p].id !== undefined && resultIds.has(facts.calls[p].id!));
  const plan = planOf(facts, known.own, mayBeSkipped, failures, query);
  if (located === undefined) return { failures: plan.end };

  const { k } = located;
  const g = facts.group[k];
  const count = plan.counts[k];
  return { failures: plan.forced.has(g) ? Math.max(count, query.maxAttempts) : count, callIndex: facts.own[k] };
}

/**
 * The segment and own-order index of the call being decided: in the last AI
 * message that calls this tool, or nowhere (a call being run now is never
 * placed before later calls, which would leave their failures uncounted).
 */
function locate(segments: Array<{ message: object }>, query: BudgetQuery, memo: BudgetMemo): { segment: number; k: number } | undefined {
  const call = query.call;
  if (call === undefined || call === null || call.name !== query.tool) return undefined;
  const id = normalId(call.id);
  for (let s = segments.length - 1; s >= 0; s--) {
    const facts = factsOf(segments[s].message, query.tool, memo);
    if (facts.own.length === 0) continue;
    const key = jsonKey(call.args);
    let group = key === undefined ? undefined : facts.groupOf.get(alikeKey(id, key));
    if (key === undefined) {
      const k = facts.own.findIndex((p, k) => facts.keys[k] === undefined && facts.calls[p].id === id && facts.calls[p].args === call.args);
      if (k >= 0) group = facts.group[k];
    }
    if (group === undefined) return undefined;
    // Alike calls cannot be told apart from inside: each takes the group's next position.
    const members = facts.members.get(group)!;
    const claimed = facts.claims.get(group) ?? 0;
    facts.claims.set(group, claimed + 1);
    return { segment: s, k: members[claimed % members.length] };
  }
  return undefined;
}

function factsOf(message: object, tool: string, memo: BudgetMemo): MessageFacts {
  let byTool = memo.facts.get(message);
  if (byTool === undefined) memo.facts.set(message, (byTool = new Map()));
  let facts = byTool.get(tool);
  if (facts !== undefined) return facts;
  const calls = toolCallsOf(message);
  const own: number[] = [];
  const group: number[] = [];
  const keys: Array<string | undefined> = [];
  const members = new Map<number, number[]>();
  const groupOf = new Map<string, number>();
  for (let p = 0; p < calls.length; p++) {
    const call = calls[p];
    if (call.name !== tool) continue;
    const k = own.length;
    const key = jsonKey(call.args);
    let g = k;
    if (key !== undefined) {
      const alike = alikeKey(call.id, key);
      g = groupOf.get(alike) ?? k;
      groupOf.set(alike, g);
    } else {
      // Arguments that cannot be written out are alike only when they are the same object.
      const j = own.findIndex((q, j) => keys[j] === undefined && calls[q].id === call.id && calls[q].args === call.args);
      if (j >= 0) g = group[j];
    }
    own.push(p);
    group.push(g);
    keys.push(key);
    if (g === k) members.set(g, [k]);
    else members.get(g)!.push(k);
  }
  facts = { calls, own, group, keys, members, groupOf, verdicts: new Map(), claims: new Map() };
  byTool.set(tool, facts);
  return facts;
}

/**
 * This tool's outcomes in a message, in call order, from the results that
 * follow it: a result carrying a guard record with a call index belongs to that
 * call; any other result goes to the first call left with its name and id (the
 * order ToolNode writes results in), or, failing that, with its name. Calls
 * with no result (never run) count for nothing.
 */
function outcomesOf(facts: MessageFacts, results: unknown[], tool: string): Outcome[] {
  const settled = facts.settled;
  if (settled !== undefined && settled.results.length === results.length && settled.results.every((r, i) => r === results[i])) return settled.outcomes;
  const { own, unplaced } = attribute(facts, results);
  const outcomes = own.filter((o): o is Outcome => o !== undefined);
  for (const result of unplaced) if (nameOf(result) === tool) outcomes.push(guardRecordOf(result) ? "failed" : "ran");
  facts.settled = { results, outcomes };
  return outcomes;
}

function attribute(facts: MessageFacts, results: unknown[]): { own: Array<Outcome | undefined>; unplaced: unknown[] } {
  const { calls } = facts;
  const taken = new Array<boolean>(calls.length).fill(false);
  const outcome = new Array<Outcome | undefined>(calls.length).fill(undefined);
  const pending: unknown[] = [];
  for (const result of results) {
    const p = guardRecordOf(result)?.callIndex;
    const name = nameOf(result);
    if (Number.isInteger(p) && p! >= 0 && p! < calls.length && !taken[p!] && (name === undefined || name === calls[p!].name) && calls[p!].id === idOf(result)) {
      taken[p!] = true;
      outcome[p!] = "failed";
    } else pending.push(result);
  }
  if (pending.length === 0) return { own: facts.own.map((p) => outcome[p]), unplaced: [] };
  // The calls in order under each name and id, and under each name, each read from the first not yet taken.
  const queues = new Map<string, { positions: number[]; next: number }>();
  const enqueue = (key: string, p: number) => {
    const queue = queues.get(key);
    if (queue === undefined) queues.set(key, { positions: [p], next: 0 });
    else queue.positions.push(p);
  };
  for (let p = 0; p < calls.length; p++) {
    enqueue(JSON.stringify([calls[p].name, calls[p].id ?? null]), p);
    enqueue(JSON.stringify([calls[p].name]), p);
  }
  const firstFree = (key: string) => {
    const queue = queues.get(key);
    if (queue === undefined) return -1;
    while (queue.next < queue.positions.length && taken[queue.positions[queue.next]]) queue.next++;
    return queue.next < queue.positions.length ? queue.positions[queue.next] : -1;
  };
  const unplaced: unknown[] = [];
  for (const result of pending) {
    const name = nameOf(result);
    const id = idOf(result);
    let p: number;
    if (name !== undefined) {
      p = firstFree(JSON.stringify([name, id ?? null]));
      if (p < 0) p = firstFree(JSON.stringify([name]));
    } else p = calls.findIndex((c, i) => !taken[i] && c.id === id); // a result without a name is rare: another tool's own ToolMessage
    if (p < 0) {
      unplaced.push(result);
      continue;
    }
    taken[p] = true;
    outcome[p] = guardRecordOf(result) ? "failed" : "ran";
  }
  return { own: facts.own.map((p) => outcome[p]), unplaced };
}

/**
 * The count before each of this tool's calls in one message, judged once for
 * the message (and kept with it for as long as its inputs are the same). A
 * group of alike valid calls runs only if every one of them would: were one
 * refused, no call of the group could tell whether it is that one, so all are.
 */
function planOf(facts: MessageFacts, known: Array<Outcome | undefined>, mayBeSkipped: boolean[], failures: number, query: BudgetQuery): Plan {
  const key = `${failures}|${known.map((o) => (o === undefined ? "-" : o[0])).join("")}|${mayBeSkipped.map((s) => (s ? 1 : 0)).join("")}`;
  if (facts.plan?.key === key) return facts.plan.plan;
  const max = query.maxAttempts;
  const n = facts.own.length;
  const counts = new Array<number>(n).fill(0);
  const ran = new Array<boolean>(n).fill(false);
  const forced = new Set<number>();
  const valid = (g: number) => {
    let verdict = facts.verdicts.get(g);
    if (verdict === undefined) {
      verdict = query.passes(facts.calls[facts.own[g]].args);
      facts.verdicts.set(g, verdict);
    }
    return verdict;
  };
  // Forcing a group only raises later counts, so every group found in one pass stays forced; passes repeat, from the
  // earliest call of a newly forced group, until none is found.
  let count = failures;
  for (let from = 0; ;) {
    const found = new Set<number>();
    for (let k = from; k < n; k++) {
      counts[k] = count;
      ran[k] = false;
      const fixed = known[k];
      const g = facts.group[k];
      if (fixed !== undefined) count = count >= max || fixed === "failed" ? count + 1 : 0;
      else if (count >= max) {
        // Refused: if another call of its group was to run, the whole group must be refused.
        if (!forced.has(g) && facts.members.get(g)!.some((j) => j < k && ran[j])) found.add(g);
        count++;
      } else if (forced.has(g) || !valid(g)) count++;
      else {
        ran[k] = true;
        if (!mayBeSkipped[k]) count = 0;
      }
    }
    if (found.size === 0) break;
    from = n;
    for (const g of found) {
      forced.add(g);
      from = Math.min(
        from,
        facts.members.get(g)!.find((j) => known[j] === undefined)!,
      );
    }
    count = counts[from];
  }
  const plan = { counts, end: count, forced };
  facts.plan = { key, plan };
  return plan;
}

function alikeKey(id: string | undefined, argsJson: string): string {
  return `${id === undefined ? "-" : `+${id}`}\u0000${argsJson}`;
}

function idOf(result: unknown): string | undefined {
  return normalId((result as { tool_call_id?: unknown }).tool_call_id);
}

function normalId(id: unknown): string | undefined {
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** The arguments as JSON, so alike calls (and a call and its copy) compare equal; undefined when they cannot be written out. */
function jsonKey(args: unknown): string | undefined {
  try {
    const text = JSON.stringify(args);
    return text === undefined ? "undefined" : text;
  } catch {
    return undefined;
  }
}

function nameOf(message: unknown): string | undefined {
  const name = (message as { name?: unknown }).name;
  return typeof name === "string" ? name : undefined;
}

function typeOf(message: unknown): string | undefined {
  if (message === null || typeof message !== "object") return undefined;
  const m = message as { getType?: () => string; type?: unknown };
  if (typeof m.getType === "function") return m.getType();
  return typeof m.type === "string" ? m.type : undefined;
}

/** The message's tool calls, index for index (an entry that is not a call keeps its place under a name no tool has). */
function toolCallsOf(message: unknown): CallFacts[] {
  const calls = (message as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.map((c) =>
    c !== null && typeof c === "object" && typeof c.name === "string"
      ? { id: normalId(c.id), name: c.name, args: c.args }
      : { id: undefined, name: "", args: undefined },
  );
}
