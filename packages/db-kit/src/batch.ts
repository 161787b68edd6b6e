/**
 * Coalesces single lookups or writes issued in the same turn of the event loop into one call of
 * `run` with all of their inputs (one database round trip instead of one each). Under load many
 * requests reach the same statement in the same turn; alone, a call waits only for the end of the
 * current turn (`setImmediate`). `run` answers one result per input, in input order; when it
 * fails, every caller of that batch gets the error.
 *
 * Example: `const find = batched((ids: string[]) => repo.findMany(ids)); await find('a1b2c3d4e')`.
 */
export function batched<I, O>(run: (inputs: I[]) => Promise<O[]>, maxBatch = 256): (input: I) => Promise<O> {
  const inputs: I[] = [];
  const waiters: { resolve: (o: O) => void; reject: (err: unknown) => void }[] = [];
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    while (inputs.length > 0) {
      const batch = inputs.splice(0, maxBatch);
      const those = waiters.splice(0, batch.length);
      run(batch).then(
        (outputs) => {
          if (outputs.length !== batch.length) {
            const err = new Error(`batched: ${outputs.length} results for ${batch.length} inputs`);
            for (const w of those) w.reject(err);
            return;
          }
          those.forEach((w, i) => w.resolve(outputs[i]!));
        },
        (err: unknown) => {
          for (const w of those) w.reject(err);
        },
      );
    }
  };

  return (input: I) =>
    new Promise<O>((resolve, reject) => {
      inputs.push(input);
      waiters.push({ resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
