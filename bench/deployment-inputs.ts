/**
 * Inputs of the validator benchmark: deployment configs as a model would
 * write them, valid and invalid (missing fields, wrong types, out-of-range
 * values, bad patterns, broken cross-field rules, several at once), and a
 * seeded generator of random mutations for the equivalence check.
 */
import { rng } from "./common.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const base = {
  service_name: "payments-api",
  replicas: 3,
  resources: { cpu_limit: 0.5, memory_limit_mb: 512 },
  health_check: { path: "/healthz", timeout_seconds: 2, interval_seconds: 10 },
};

function config(patch: (c: any) => void): Json {
  const c = structuredClone(base);
  patch(c);
  return c as Json;
}

export const VALID_CONFIGS: Json[] = [
  config(() => {}),
  config((c) => {
    c.service_name = "checkout";
    c.replicas = 8;
    c.resources.cpu_limit = 2;
  }),
  config((c) => {
    c.service_name = "search-indexer-v2";
    c.replicas = 1;
    c.resources = { cpu_limit: 0.1, memory_limit_mb: 128 };
  }),
  config((c) => {
    c.replicas = 20;
    c.resources = { cpu_limit: 8, memory_limit_mb: 16384 };
    c.health_check = { path: "/ready", timeout_seconds: 4, interval_seconds: 5 };
  }),
  config((c) => {
    c.service_name = "a";
    c.health_check.path = "/";
  }),
  config((c) => {
    c.service_name = "ledger";
    c.replicas = 6;
    c.resources.cpu_limit = 1;
    c.resources.memory_limit_mb = 2048;
    c.team = "payments"; // extra fields are allowed by the article's schema
  }),
  config((c) => {
    c.service_name = "notifications";
    c.health_check = { path: "/health/live", timeout_seconds: 1, interval_seconds: 30 };
  }),
  config((c) => {
    c.service_name = "gateway";
    c.replicas = 12;
    c.resources.cpu_limit = 1.5;
    c.resources.memory_limit_mb = 1024;
  }),
];

export const INVALID_CONFIGS: Json[] = [
  // the article's own example of broken business rules
  config((c) => {
    c.replicas = 8;
    c.health_check.timeout_seconds = 30;
  }),
  config((c) => delete c.health_check),
  config((c) => {
    c.replicas = "3";
  }),
  config((c) => {
    c.service_name = "Payments_API";
  }),
  config((c) => {
    c.resources.memory_limit_mb = 64;
  }),
  config((c) => {
    c.health_check.path = "healthz";
  }),
  config((c) => {
    c.replicas = 25;
    c.resources.cpu_limit = 0.05;
  }),
  config((c) => {
    c.resources = { cpu_limit: "1" };
  }),
  config((c) => {
    c.health_check = { path: "/h", timeout_seconds: 10, interval_seconds: 10 };
  }),
  config((c) => {
    c.health_check.interval_seconds = 2;
    c.health_check.timeout_seconds = 0;
  }),
  {} as Json,
  [] as Json,
  "not an object",
  null,
  // several problems at once
  {
    service_name: "Bad Name",
    replicas: 8.5,
    resources: { cpu_limit: 0.5, memory_limit_mb: 100.5 },
    health_check: { path: 1, timeout_seconds: 60, interval_seconds: 3 },
  },
  { replicas: 8, resources: { cpu_limit: 0.5 }, health_check: {} },
];

/** Random mutations of valid configs, for checking that two validators agree. */
export function mutatedConfigs(count: number, seed = 7): Json[] {
  const random = rng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
  const odd: Json[] = [null, true, false, 0, -1, 0.5, 1.5, 7, 25, 1e6, "", "x", "Upper", "/ok", "3", [], {}, [1], { a: 1 }];
  const paths = [
    ["service_name"],
    ["replicas"],
    ["resources"],
    ["resources", "cpu_limit"],
    ["resources", "memory_limit_mb"],
    ["health_check"],
    ["health_check", "path"],
    ["health_check", "timeout_seconds"],
    ["health_check", "interval_seconds"],
  ];
  const out: Json[] = [];
  for (let i = 0; i < count; i++) {
    const c = structuredClone(pick(VALID_CONFIGS)) as any;
    const edits = 1 + Math.floor(random() * 4);
    for (let e = 0; e < edits; e++) {
      const path = pick(paths);
      let parent = c;
      for (const key of path.slice(0, -1)) parent = parent !== null && typeof parent === "object" && !Array.isArray(parent) ? parent[key] : undefined;
      if (parent === null || typeof parent !== "object" || Array.isArray(parent)) continue;
      const key = path[path.length - 1];
      if (random() < 0.25) delete parent[key];
      else parent[key] = structuredClone(pick(odd));
    }
    out.push(c);
  }
  return out;
}
