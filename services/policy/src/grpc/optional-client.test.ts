import { type ServiceError, status } from '@grpc/grpc-js';
import { Optional } from './clients.js';

/** A peer whose calls fail with the given codes in turn, then answer 'ok'. */
function peer(codes: status[]) {
  const calls = { n: 0 };
  const client = { close: () => undefined };
  const call = (_c: typeof client, _d: Date, cb: (err: ServiceError | null, res: string) => void) => {
    const code = codes[calls.n++];
    setImmediate(() => (code === undefined ? cb(null, 'ok') : cb(Object.assign(new Error(`code ${code}`), { code }) as ServiceError, '')));
  };
  return { calls, client, call };
}

describe('optional peer calls', () => {
  it('asks again after an UNAVAILABLE (a replica behind the address went) and answers what the next one says', async () => {
    const p = peer([status.UNAVAILABLE, status.UNAVAILABLE]);
    const o = new Optional('127.0.0.1:1', () => p.client, () => undefined);
    expect(await o.call('GetRouterStates', p.call)).toBe('ok');
    expect(p.calls.n).toBe(3);
  });

  it('gives up after a few tries (null: the caller shows what it can), logging one line', async () => {
    const p = peer(Array(10).fill(status.UNAVAILABLE));
    const lines: string[] = [];
    const o = new Optional('127.0.0.1:1', () => p.client, (m) => lines.push(m));
    expect(await o.call('GetRouterStates', p.call)).toBeNull();
    expect(p.calls.n).toBe(4);
    expect(lines).toHaveLength(1);
  });

  it('does not retry other errors, and skips an UNIMPLEMENTED call for a while', async () => {
    const unimplemented = peer([status.UNIMPLEMENTED]);
    const o = new Optional('127.0.0.1:1', () => unimplemented.client, () => undefined);
    expect(await o.call('X', unimplemented.call)).toBeNull();
    expect(await o.call('X', unimplemented.call)).toBeNull();
    expect(unimplemented.calls.n).toBe(1);
    const invalid = peer([status.INVALID_ARGUMENT]);
    const o2 = new Optional('127.0.0.1:1', () => invalid.client, () => undefined);
    await expect(o2.call('Y', invalid.call)).rejects.toThrow('code 3');
    expect(invalid.calls.n).toBe(1);
  });
});
