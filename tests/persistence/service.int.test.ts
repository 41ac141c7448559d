/**
 * The example service, started as the README says (node --import tsx
 * examples/service.ts), as two instances on one fresh database started at the
 * same moment: both come up, share the work, answer bad requests with 400 and
 * a clear message, report provider failures as 502, and exit 0 on SIGTERM.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { builtinSpecs } from "../../src/specs/registry.js";
import { freePort, REPO_ROOT } from "../support/dev-server.js";
import { startScriptedOpenAIServer, type ScriptedServer } from "../../testkit/openai-server.js";
import { describeWithPostgres, waitFor } from "../support/postgres.js";

const VALID = JSON.stringify(builtinSpecs.get("deployment-config")!.example);
const BROKEN = JSON.stringify({ ...(builtinSpecs.get("deployment-config")!.example as object), replicas: 8 });
const PROVIDER_DOWN = "provider-down";

interface Service {
  url: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startService(env: Record<string, string>, port: number): Service {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/service.ts"], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", OPENAI_API_KEY: "test-key", LLM_MAX_RETRIES: "0", PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal }));
  });
  return { url: `http://127.0.0.1:${port}`, child, output: () => output, exited };
}

async function waitHealthy(service: Service): Promise<void> {
  let exited = false;
  void service.exited.then(() => (exited = true));
  await waitFor(
    `${service.url}/healthz`,
    async () => {
      if (exited) throw new Error(`the service exited during start-up:\n${service.output()}`);
      try {
        return (await fetch(`${service.url}/healthz`)).status === 200;
      } catch {
        return false;
      }
    },
    90_000,
    100,
  );
}

async function post(url: string, body: string): Promise<{ status: number; json: Record<string, any> }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, json: (await res.json()) as Record<string, any> };
}

describeWithPostgres("the example service on PostgreSQL", (db) => {
  let server: ScriptedServer;
  let services: Service[] = [];

  beforeAll(async () => {
    server = await startScriptedOpenAIServer({
      latencyMs: 20,
      responder: (req) => {
        const last = req.messages.at(-1)?.content ?? "";
        if (last.includes(PROVIDER_DOWN)) return { fault: "status", status: 400, body: { error: { message: "The model `nope` does not exist" } } };
        return last.includes("A validator rejected it") ? VALID : BROKEN;
      },
    });
    // Two instances on one new database, started together: the first start's table creation is shared safely.
    const ports = [await freePort()];
    while (ports.length < 2) {
      const port = await freePort();
      if (!ports.includes(port)) ports.push(port);
    }
    services = ports.map((port) => startService({ DATABASE_URL: db.url, OPENAI_BASE_URL: server.baseURL }, port));
    await Promise.all(services.map(waitHealthy));
  }, 120_000);

  afterAll(async () => {
    for (const s of services) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
    await Promise.all(services.map((s) => s.exited));
    await server?.close();
  });

  it(
    "answers concurrent POST /validate on both instances, refuses bad requests clearly, and stops on SIGTERM with exit 0",
    async () => {
      const health = await fetch(`${services[0].url}/healthz`);
      expect(await health.json()).toEqual({ status: "ok", persistence: "postgres" });

      // 20 concurrent runs, spread over the two instances.
      const runs = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          post(`${services[i % 2].url}/validate`, JSON.stringify({ request: `A deployment config for service-${i}`, maxAttempts: 3, threadId: `svc-${i}-${Date.now()}` })),
        ),
      );
      for (const { status, json } of runs) {
        expect(status, JSON.stringify(json)).toBe(200);
        expect(json.success).toBe(true);
        expect(json.stopReason).toBe("valid");
        expect(json.attempts).toBe(2);
        expect(json.result).toEqual(JSON.parse(VALID));
        expect(json.errors).toEqual([]);
        expect(json.history.map((h: { attempt: number }) => h.attempt)).toEqual([1, 2]);
        expect(json.usage.calls).toBe(2);
      }

      // Bad requests: 400 with a message that says what is wrong.
      const bad: Array<[string, string, RegExp]> = [
        ["/validate", "{not json", /not valid JSON/],
        ["/validate", "[1, 2]", /must be a JSON object; got an array/],
        ["/validate", "{}", /request is required/],
        ["/validate", JSON.stringify({ request: "" }), /request is empty/],
        ["/validate", JSON.stringify({ request: "x", maxAttempts: 0 }), /maxAttempts must be an integer from 1 to 10; got 0/],
        ["/validate", JSON.stringify({ request: "x", spec: "no-such-spec" }), /no-such-spec/],
        ["/validate", JSON.stringify({ request: "x", maxAttempt: 2 }), /Unknown field "maxAttempt"/],
        ["/reflexion", JSON.stringify({ tasks: "Explain recursion" }), /tasks must be a list of strings/],
        ["/reflexion", JSON.stringify({ tasks: ["x"], maxLoops: 11 }), /maxLoops must be an integer from 1 to 10/],
      ];
      for (const [path, body, message] of bad) {
        const { status, json } = await post(`${services[1].url}${path}`, body);
        expect(status, `${path} ${body}`).toBe(400);
        expect(json.error).toMatch(message);
      }

      // Provider failure: 502 with what the provider said.
      const failed = await post(`${services[0].url}/validate`, JSON.stringify({ request: `${PROVIDER_DOWN}: a config` }));
      expect(failed.status).toBe(502);
      expect(failed.json.error).toMatch(/HTTP 400.*does not exist/);

      // Unknown route, wrong method, body too large.
      expect((await post(`${services[0].url}/nope`, "{}")).status).toBe(404);
      expect((await fetch(`${services[0].url}/validate`)).status).toBe(405);
      const huge = await post(`${services[0].url}/validate`, JSON.stringify({ request: "x".repeat(1_100_000) }));
      expect(huge.status).toBe(413);
      expect(huge.json.error).toMatch(/larger than 1048576 bytes/);

      // Graceful shutdown.
      for (const s of services) s.child.kill("SIGTERM");
      const exits = await Promise.all(services.map((s) => s.exited));
      for (const [i, exit] of exits.entries()) expect(exit, services[i].output()).toEqual({ code: 0, signal: null });
      expect(services[0].output()).toContain("stopped");
    },
    120_000,
  );
});
