import { firstBlockingDirectory, userIds } from './reachable.js';

const PASSWD = 'root:x:0:0:root:/root:/bin/bash\npostgres:x:105:110:PostgreSQL administrator:/var/lib/postgresql:/bin/bash\n';

describe('userIds', () => {
  it('reads uid and gid of a listed user; undefined for another', () => {
    expect(userIds(PASSWD, 'postgres')).toEqual({ uid: 105, gid: 110 });
    expect(userIds(PASSWD, 'nobody')).toBeUndefined();
  });
});

describe('firstBlockingDirectory', () => {
  const tree: Record<string, { mode: number; uid: number; gid: number }> = {
    '/': { mode: 0o40755, uid: 0, gid: 0 },
    '/root': { mode: 0o40700, uid: 0, gid: 0 },
    '/root/repo': { mode: 0o40755, uid: 0, gid: 0 },
    '/srv': { mode: 0o40755, uid: 0, gid: 0 },
    '/srv/pg': { mode: 0o40700, uid: 105, gid: 110 },
    '/srv/grp': { mode: 0o40710, uid: 0, gid: 110 },
  };
  const stat = (p: string) => tree[p];
  const postgres = { uid: 105, gid: 110 };

  it('names the first directory on the way that the user may not enter', () => {
    expect(firstBlockingDirectory('/root/repo/data', postgres, stat)).toEqual({ dir: '/root', mode: 0o700 });
    expect(firstBlockingDirectory('/root/repo/data', undefined, stat)).toEqual({ dir: '/root', mode: 0o700 });
  });

  it('counts the owner and group permissions for the user who owns the directory or is in its group', () => {
    expect(firstBlockingDirectory('/srv/pg/data', postgres, stat)).toBeUndefined();
    expect(firstBlockingDirectory('/srv/grp/x', postgres, stat)).toBeUndefined();
    expect(firstBlockingDirectory('/srv/pg/data', { uid: 7, gid: 7 }, stat)).toEqual({ dir: '/srv/pg', mode: 0o700 });
    expect(firstBlockingDirectory('/srv/grp/x', undefined, stat)).toEqual({ dir: '/srv/grp', mode: 0o710 });
  });

  it('stops at the first directory that does not exist yet', () => {
    expect(firstBlockingDirectory('/srv/new/deeper', postgres, stat)).toBeUndefined();
  });
});
