import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A user's ids, as `/etc/passwd` gives them. */
export interface UserIds {
  uid: number;
  gid: number;
}

/** The uid and gid of `name` in a passwd file's text, if listed. */
export function userIds(passwd: string, name: string): UserIds | undefined {
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':');
    if (user === name && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  return undefined;
}

/** The mode and owner of a directory, as `fs.statSync` gives them. */
export type DirStat = (path: string) => { mode: number; uid: number; gid: number } | undefined;

const statOrUndefined: DirStat = (path) => {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
};

/**
 * The first existing directory on the way to `path` (from `/`, `path` included when it exists)
 * that `user` may not enter (no search permission for it as owner, group or other), if any.
 * Without a user (not created yet) only the permissions for others count.
 */
export function firstBlockingDirectory(path: string, user: UserIds | undefined, stat: DirStat = statOrUndefined): { dir: string; mode: number } | undefined {
  const chain: string[] = [];
  for (let p = resolve(path); ; p = dirname(p)) {
    chain.unshift(p);
    if (dirname(p) === p) break;
  }
  for (const dir of chain) {
    const st = stat(dir);
    if (!st) break; // the rest does not exist yet; it is created reachable
    const bit = user && st.uid === user.uid ? 0o100 : user && st.gid === user.gid ? 0o010 : 0o001;
    if ((st.mode & bit) === 0) return { dir, mode: st.mode & 0o7777 };
  }
  return undefined;
}
