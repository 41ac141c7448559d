/**
 * The attack suite (./attacks.ts) against a real dev server with auth on:
 * every case must hold. One server for the whole file.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { runAuthAttacks, startAttackTarget, type AttackTarget } from "../../reliability/auth-attacks.js";

let target: (AttackTarget & { server: { tail(chars?: number): string } }) | undefined;

beforeAll(async () => {
  target = await startAttackTarget();
}, 180_000);

afterAll(async () => {
  await target?.stop();
}, 60_000);

it("two users with valid keys: every attack in the suite is refused, and each user keeps full use of their own data", async () => {
  const results = await runAuthAttacks(target!.url);
  const breaches = results.filter((r) => !r.held).map((r) => `${r.name}\n    ${r.detail}`);
  expect(breaches, `--- langgraphjs dev output (tail) ---\n${target!.server.tail(3_000)}`).toEqual([]);
  expect(results.length).toBeGreaterThanOrEqual(15);
}, 600_000);
