import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, controlLine } from './snapshot.js';

/** The file name prefix of snapshots: `ziti-db-YYYYMMDD-HHMMSS.jsonl.gz` (OpenZiti: `ctrl.db-YYYYMMDD-HHMMSS`). */
export const SNAPSHOT_PREFIX = 'ziti-db';

const two = (n: number) => String(n).padStart(2, '0');

/** `ziti-db-20261126-154501.jsonl.gz` for that moment (UTC). */
export function snapshotFileName(at: Date): string {
  const date = `${at.getUTCFullYear()}${two(at.getUTCMonth() + 1)}${two(at.getUTCDate())}`;
  const time = `${two(at.getUTCHours())}${two(at.getUTCMinutes())}${two(at.getUTCSeconds())}`;
  return `${SNAPSHOT_PREFIX}-${date}-${time}.jsonl.gz`;
}

export interface SnapshotFileWriter {
  /** Where the complete file will be. */
  path: string;
  /** Appends lines (each without its line break), waiting while the disk is behind. */
  write(lines: readonly string[]): Promise<void>;
  /** Writes the end line, closes the file and renames it to `path`. */
  finish(): Promise<string>;
  /** Drops the unfinished file. */
  abort(): Promise<void>;
}

/**
 * A snapshot file in `dir` (created when missing), written under a temporary name
 * (`.<name>.partial`) and renamed once complete, so a file with the final name is always whole.
 * The header line names the contexts that follow.
 */
export function createSnapshotFile(dir: string, contexts: readonly string[], at = new Date()): SnapshotFileWriter {
  mkdirSync(dir, { recursive: true });
  const base = snapshotFileName(at);
  let name = base;
  for (let i = 1; existsSync(join(dir, name)) || existsSync(join(dir, `.${name}.partial`)); i++) name = base.replace(/\.jsonl\.gz$/, `-${i}.jsonl.gz`);
  const path = join(dir, name);
  const temp = join(dir, `.${name}.partial`);
  const out = createWriteStream(temp, { mode: 0o600 });
  const gzip = createGzip();
  gzip.pipe(out);
  let failure: Error | undefined;
  gzip.on('error', (err) => (failure ??= err));
  out.on('error', (err) => (failure ??= err));
  const put = async (text: string) => {
    if (failure) throw failure;
    if (!gzip.write(text)) await Promise.race([once(gzip, 'drain'), once(out, 'error').then(([e]) => Promise.reject(e as Error))]);
  };
  const header = controlLine('snapshot', { format: SNAPSHOT_FORMAT, version: SNAPSHOT_VERSION, createdAt: at.toISOString(), contexts });
  // Kept rejected for the next caller, but never an unhandled rejection in between.
  const chain = (next: Promise<void>) => {
    next.catch(() => undefined);
    return next;
  };
  let pending = chain(put(`${header}\n`));
  return {
    path,
    write(lines) {
      if (lines.length === 0) return pending;
      pending = chain(pending.then(() => put(`${lines.join('\n')}\n`)));
      return pending;
    },
    async finish() {
      await pending;
      await put(`${controlLine('end', { contexts: contexts.length })}\n`);
      gzip.end();
      await finished(out);
      if (failure) throw failure;
      renameSync(temp, path);
      return path;
    },
    async abort() {
      gzip.destroy();
      out.destroy();
      rmSync(temp, { force: true });
    },
  };
}
