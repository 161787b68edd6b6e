/**
 * Coalesces single lookups or writes issued in the same turn of the event loop into one call of
 * `run` with all of their inputs (one database round trip instead of one each). Under load many
 * requests reach the same statement in the same turn; alone, a call waits only for the end of the
 * current turn (`setImmediate`). `run` answers one result per input, in input order.
 *
 * Members of a batch are isolated: when `run` fails for a batch of several inputs, each input is
 * run again alone, so an input that breaks the statement (a value the database refuses, a row a
 * concurrent delete took away) fails only its own caller, and its neighbours get their results.
 * `run` must therefore be all or nothing (one statement, or one transaction): a failed run has
 * written nothing.
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
          if (batch.length === 1) return those[0]!.reject(err);
          batch.forEach((input, i) => {
            run([input]).then(
              (outputs) => (outputs.length === 1 ? those[i]!.resolve(outputs[0]!) : those[i]!.reject(new Error(`batched: ${outputs.length} results for 1 input`))),
              (alone: unknown) => those[i]!.reject(alone),
            );
          });
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
