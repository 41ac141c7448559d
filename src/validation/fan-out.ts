/**
 * One async source read by several consumers: each reader gets every item
 * pulled from the moment it starts reading (its first `next()`), in order, and the source is pulled
 * once per item, only as fast as the fastest reader asks. When the last reader
 * leaves before the source has ended, the source is closed (`return()`), as a
 * `for await` that breaks out of the source itself would close it. A reader
 * that does not keep items (`keep: false`) only drives the source to its end.
 */
interface FanOut<T> {
  /** A reader of the items from its first `next()` on (a reader never read holds nothing). */
  subscribe(options?: { keep?: boolean }): AsyncGenerator<T, void, undefined>;
  /** Whether the source has ended (or failed, or was closed). */
  readonly ended: boolean;
}

interface Reader<T> {
  keep: boolean;
  items: T[];
  next: number;
}

export function fanOut<T>(source: AsyncIterator<T>): FanOut<T> {
  const readers = new Set<Reader<T>>();
  let ended = false;
  let failure: { error: unknown } | undefined;
  let pulling: Promise<void> | undefined;

  const pull = (): Promise<void> =>
    (pulling ??= source.next().then(
      (result) => {
        pulling = undefined;
        if (result.done) ended = true;
        else for (const reader of readers) if (reader.keep) reader.items.push(result.value);
      },
      (error: unknown) => {
        pulling = undefined;
        ended = true;
        failure = { error };
      },
    ));

  async function* read(reader: Reader<T>): AsyncGenerator<T, void, undefined> {
    readers.add(reader);
    try {
      for (;;) {
        if (reader.next < reader.items.length) {
          const item = reader.items[reader.next];
          reader.items[reader.next++] = undefined as T; // released as soon as it is read
          if (reader.next === reader.items.length) ((reader.items.length = 0), (reader.next = 0));
          yield item;
          continue;
        }
        if (ended) {
          if (failure) throw failure.error;
          return;
        }
        await pull();
      }
    } finally {
      readers.delete(reader);
      if (readers.size === 0 && !ended) {
        ended = true;
        await source.return?.();
      }
    }
  }

  return {
    subscribe({ keep = true } = {}) {
      return read({ keep, items: [], next: 0 });
    },
    get ended() {
      return ended;
    },
  };
}
