/**
 * A PostgresSaver whose `getDeltaChannelHistory` reads the ancestor chain's
 * writes for the requested channels in one query (a recursive CTE over
 * parent_checkpoint_id), instead of the base class's one `getTuple` per
 * ancestor. What the checkpoint-bytes benchmark (bench/checkpoint-bytes.ts)
 * measures as variant (c).
 *
 * The contract is the base class's (`BaseCheckpointSaver.getDeltaChannelHistory`
 * in @langchain/langgraph-checkpoint): walk from the target's parent towards the
 * root; per channel, collect every on-path write and stop at the nearest
 * ancestor whose stored value for the channel is present (that value is the
 * seed; the ancestor's own writes are collected too); writes come oldest first,
 * a step's writes in the order `getTuple` gives them (task id, index).
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import type pg from "pg";

type Histories = Awaited<ReturnType<BaseCheckpointSaver["getDeltaChannelHistory"]>>;
type DeltaChannelHistory = Histories[string];
type Blob = [Uint8Array, Uint8Array, Uint8Array];
type WriteRow = [Uint8Array, Uint8Array, Uint8Array, Uint8Array];

export class OneQueryPostgresSaver extends PostgresSaver {
  private readonly historyPool: pg.Pool;
  private readonly historySql: string;

  constructor(pool: pg.Pool, options?: { schema?: string }) {
    super(pool, undefined, options);
    this.historyPool = pool;
    this.historySql = historyQuery(options?.schema ?? "public");
  }

  override async getDeltaChannelHistory(options: { config: RunnableConfig; channels: string[] }): Promise<Histories> {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    const { thread_id, checkpoint_ns = "", checkpoint_id } = config.configurable ?? {};
    const { rows } = await this.historyPool.query<{ pending: string[]; seeds: Blob[] | null; writes: WriteRow[] | null }>(this.historySql, [
      thread_id,
      checkpoint_ns,
      checkpoint_id ?? null,
      channels,
    ]);
    const blocks: Record<string, DeltaChannelHistory["writes"][]> = Object.fromEntries(channels.map((ch) => [ch, []]));
    const seeds: Record<string, unknown> = {};
    for (const row of rows) {
      const writes = await this._loadWrites(row.writes ?? []);
      for (const ch of row.pending) blocks[ch].push(writes.filter((write) => write[1] === ch));
      Object.assign(seeds, await this._loadBlobs(row.seeds ?? []));
    }
    const result: Histories = {};
    for (const ch of channels) {
      // Rows come nearest first: the oldest block is the last one.
      const entry: DeltaChannelHistory = { writes: blocks[ch].reverse().flat() };
      if (Object.prototype.hasOwnProperty.call(seeds, ch)) entry.seed = seeds[ch];
      result[ch] = entry;
    }
    return result;
  }
}

/**
 * One row per ancestor, nearest first, with the channels still unresolved on
 * arriving there (`pending`), their stored values there (`seeds`) and their
 * writes there (`writes`, in `getTuple`'s order). The walk stops after the
 * ancestor where the last pending channel has a stored value.
 */
function historyQuery(schema: string): string {
  const t = (table: string) => `"${schema}".${table}`;
  const stored = (alias: string, channel: string, versions: string) =>
    `${alias}.thread_id = $1 and ${alias}.checkpoint_ns = $2 and ${alias}.channel = ${channel} and ${alias}.version = ${versions} ->> ${alias}.channel and ${alias}.type <> 'empty'`;
  return `
with recursive chain(checkpoint_id, parent_checkpoint_id, versions, depth, pending) as (
  select cp.checkpoint_id, cp.parent_checkpoint_id, cp.checkpoint -> 'channel_versions', 1, $4::text[]
    from ${t("checkpoints")} cp
   where cp.thread_id = $1 and cp.checkpoint_ns = $2
     and cp.checkpoint_id = (
       select target.parent_checkpoint_id from ${t("checkpoints")} target
        where target.thread_id = $1 and target.checkpoint_ns = $2
          and target.checkpoint_id = coalesce($3::text, (select max(latest.checkpoint_id) from ${t("checkpoints")} latest where latest.thread_id = $1 and latest.checkpoint_ns = $2)))
  union all
  select p.checkpoint_id, p.parent_checkpoint_id, p.checkpoint -> 'channel_versions', c.depth + 1, next.pending
    from chain c
    cross join lateral (
      select coalesce(array_agg(ch), '{}'::text[]) as pending from unnest(c.pending) ch
       where not exists (select 1 from ${t("checkpoint_blobs")} bl where ${stored("bl", "ch", "c.versions")})
    ) next
    join ${t("checkpoints")} p on p.thread_id = $1 and p.checkpoint_ns = $2 and p.checkpoint_id = c.parent_checkpoint_id
   where cardinality(next.pending) > 0
)
select c.pending,
  (select array_agg(array[bl.channel::bytea, bl.type::bytea, bl.blob]) from ${t("checkpoint_blobs")} bl
    where ${stored("bl", "any(c.pending)", "c.versions")}) as seeds,
  (select array_agg(array[cw.task_id::text::bytea, cw.channel::bytea, cw.type::bytea, cw.blob] order by cw.task_id, cw.idx) from ${t("checkpoint_writes")} cw
    where cw.thread_id = $1 and cw.checkpoint_ns = $2 and cw.checkpoint_id = c.checkpoint_id and cw.channel = any(c.pending)) as writes
  from chain c
 order by c.depth`;
}
