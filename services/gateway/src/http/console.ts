import { createReadStream, realpathSync, statSync } from 'node:fs';
import { lstat, realpath, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, sep } from 'node:path';
import { ApiError } from '@ziti/errors';

/** Where the admin console (ZAC) is served, as by OpenZiti's controller (its `zac` binding). */
export const CONSOLE_ROOT = '/zac';
/** ZAC builds also load a few files from `/assets/…` at the origin's root; OpenZiti's handler serves those too. */
const ASSETS_ROOT = '/assets';
/** The page served for the console's root and every unknown path under it (SPA fallback). */
const INDEX_FILE = 'index.html';
/** Largest file served; a ZAC build's biggest bundle is a few MiB. */
export const CONSOLE_MAX_FILE_BYTES = 64 * 1024 * 1024;

/** Content types by extension (those of Go's `mime` table that a ZAC build holds). */
const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.xml': 'text/xml; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/vnd.microsoft.icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.otf': 'font/otf',
  '.eot': 'application/vnd.ms-fontobject',
  '.wasm': 'application/wasm',
  '.webmanifest': 'application/manifest+json',
  '.pdf': 'application/pdf',
};

export interface ConsoleHandler {
  /** True when the path (already split from its query) belongs to the console. */
  owns(path: string): boolean;
  /** Answers a console request: a file, the index (SPA fallback), a redirect, or an error to send in the envelope. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

/**
 * Serves a ZAC build from `dir` as OpenZiti's controller does (`webapis/zac.go`, its SPA handler):
 * `/zac` and `/zac/…` map into the directory, as do `/assets/…`; a path that is not a file there
 * (missing, a directory) gets `index.html`, so the console's own routes load it; a request for
 * `…/index.html` is redirected to its directory (as Go's `http.ServeFile`). Content type by
 * extension, `Last-Modified` with `If-Modified-Since` (304), no other caching header (none is sent
 * by OpenZiti either). GET and HEAD only (405 otherwise). Nothing outside the directory is ever
 * read: `..` segments (plain or percent-encoded), NUL bytes, bad escapes and files whose real
 * path (symlinks resolved) leaves the directory are 404 `NOT_FOUND`; files above
 * `CONSOLE_MAX_FILE_BYTES` too. Files are streamed.
 *
 * Fails at once when `dir` is not a directory (a wrong setting is a failed start, not a 404 later).
 */
export function consoleHandler(dir: string): ConsoleHandler {
  let root: string;
  try {
    root = realpathSync(dir);
    if (!statSync(root).isDirectory()) throw new Error('not a directory');
  } catch (err) {
    throw new Error(`ZITI_ZAC_DIR: "${dir}" is not a readable directory (${(err as Error).message})`);
  }
  const inside = (p: string) => p === root || p.startsWith(root + sep);

  /** The file's real path when it is a regular file inside the directory; undefined otherwise. */
  async function resolveFile(relative: string): Promise<{ path: string; size: number; mtime: Date } | undefined> {
    const candidate = join(root, relative);
    if (!inside(candidate)) return undefined;
    try {
      await lstat(candidate);
      const real = await realpath(candidate);
      if (!inside(real)) return undefined;
      const info = await stat(real);
      if (!info.isFile()) return undefined;
      return { path: real, size: info.size, mtime: info.mtime };
    } catch {
      return undefined;
    }
  }

  function decodeSegments(rest: string): string[] {
    const segments: string[] = [];
    for (const raw of rest.split('/')) {
      if (raw === '') continue;
      let seg: string;
      try {
        seg = decodeURIComponent(raw);
      } catch {
        throw ApiError.of('NOT_FOUND');
      }
      // Traversal and bytes no file name here carries: refused, never looked up.
      if (seg === '.' || seg === '..' || seg.includes('/') || seg.includes('\\') || seg.includes('\0')) throw ApiError.of('NOT_FOUND');
      segments.push(seg);
    }
    return segments;
  }

  function send(req: IncomingMessage, res: ServerResponse, file: { path: string; size: number; mtime: Date }): Promise<void> {
    const lastModified = new Date(Math.floor(file.mtime.getTime() / 1000) * 1000);
    res.setHeader('last-modified', lastModified.toUTCString());
    const since = Date.parse(req.headers['if-modified-since'] ?? '');
    if (!Number.isNaN(since) && lastModified.getTime() <= since) {
      res.statusCode = 304;
      res.end();
      return Promise.resolve();
    }
    res.statusCode = 200;
    res.setHeader('content-type', CONTENT_TYPES[extname(file.path).toLowerCase()] ?? 'application/octet-stream');
    res.setHeader('content-length', file.size);
    res.setHeader('x-content-type-options', 'nosniff');
    if (req.method === 'HEAD') {
      res.end();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const stream = createReadStream(file.path);
      stream.on('error', () => {
        // Headers are out; the connection is cut so the client sees a short body, not a wrong one.
        res.destroy();
        resolve();
      });
      res.on('close', () => {
        stream.destroy();
        resolve();
      });
      stream.pipe(res);
    });
  }

  return {
    owns: (path) => path === CONSOLE_ROOT || path.startsWith(`${CONSOLE_ROOT}/`) || path.startsWith(`${ASSETS_ROOT}/`),
    async serve(req, res, path) {
      if (req.method !== 'GET' && req.method !== 'HEAD') throw ApiError.of('METHOD_NOT_ALLOWED');
      const rest = path.startsWith(`${ASSETS_ROOT}/`) ? path : path.slice(CONSOLE_ROOT.length);
      const segments = decodeSegments(rest);
      if (segments[segments.length - 1] === INDEX_FILE && rest.endsWith(`/${INDEX_FILE}`)) {
        res.statusCode = 301;
        res.setHeader('location', './');
        res.end();
        return;
      }
      const file = (segments.length > 0 ? await resolveFile(join(...segments)) : undefined) ?? (await resolveFile(INDEX_FILE));
      if (!file || file.size > CONSOLE_MAX_FILE_BYTES) throw ApiError.of('NOT_FOUND');
      await send(req, res, file);
    },
  };
}
