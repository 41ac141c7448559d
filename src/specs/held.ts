/**
 * The code-defined specs a graph's runs in progress use. A spec with code
 * rules cannot be kept in a checkpoint: a run records it by name and
 * fingerprint (see recordSpec), and each later step finds it here, the
 * builder's own or one a run was given in its context.
 */
import { builtinSpecs, fingerprintSpec, recordSpec, resolveSpec, specFromRecord, type SpecRecord, type SpecRef } from "./registry.js";
import type { RuntimeSpecLimits } from "./limits.js";
import type { Spec } from "./spec.js";

/**
 * A run's spec is held weakly, by name and fingerprint: the run's own context
 * holds it for as long as the run goes on, however many other specs come and
 * go, and a spec no run holds any more is freed with its entry.
 */
export class HeldSpecs {
  private readonly own: Spec | undefined;
  private readonly specLimits: Partial<RuntimeSpecLimits> | undefined;
  private readonly held = new Map<string, WeakRef<Spec>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    if (this.held.get(key)?.deref() === undefined) this.held.delete(key);
  });

  /** `own`: the builder's own code-defined spec, always known; `specLimits`: the limits a run-time spec is resolved under. */
  constructor(options: { own?: Spec; specLimits?: Partial<RuntimeSpecLimits> } = {}) {
    this.own = options.own;
    this.specLimits = options.specLimits;
  }

  /** What a run starting with `ref` records about its spec; a code-defined spec is held from here on. */
  record(ref: SpecRef): SpecRecord {
    const spec = resolveSpec(ref, { specLimits: this.specLimits });
    this.remember(spec);
    return recordSpec(spec);
  }

  /** The spec a run recorded when it began. */
  find(record: SpecRecord): Spec {
    if (record.kind !== "code") return specFromRecord(record, [], { specLimits: this.specLimits });
    const held = this.held.get(keyOf(record.name, record.fingerprint))?.deref();
    if (held !== undefined) return held;
    // The builder's own spec, or a refusal naming the specs this graph knows.
    const known = [...(this.own ? [this.own] : []), ...[...this.held.values()].flatMap((ref) => ref.deref() ?? [])];
    return specFromRecord(record, known, { specLimits: this.specLimits });
  }

  private remember(spec: Spec): void {
    if (spec.untrusted || builtinSpecs.get(spec.name) === spec || spec === this.own) return;
    const key = keyOf(spec.name, fingerprintSpec(spec));
    if (this.held.get(key)?.deref() !== undefined) return;
    this.held.set(key, new WeakRef(spec));
    this.forget.register(spec, key);
  }
}

function keyOf(name: string, fingerprint: string): string {
  return `${fingerprint}:${name}`;
}
