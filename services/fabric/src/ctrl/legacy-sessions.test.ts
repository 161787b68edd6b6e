import { type InProcessEventBus, createInProcessBus, newChangeEvent } from '@ziti/messaging';
import type { ApiSessionCertificateFingerprints, LegacyApiSession } from '@ziti/proto';
import type { Peers } from '../grpc/peers.js';
import { LegacySessions, type LegacySessionSink } from './legacy-sessions.js';

/** identity-auth's sessions and pki-enrollment's session certificates, as fabric reads them. */
class FakePeers {
  sessions: LegacyApiSession[] = [];
  certs = new Map<string, string[]>();
  pkiDown = false;
  certCalls: string[][] = [];

  listLegacyApiSessions: Peers['listLegacyApiSessions'] = async (req) => {
    const wanted = req.ids ?? [];
    return { apiSessions: this.sessions.filter((s) => wanted.length === 0 || wanted.includes(s.id)), nextAfterId: '' };
  };

  listApiSessionCertificateFingerprints: Peers['listApiSessionCertificateFingerprints'] = async (ids) => {
    this.certCalls.push(ids);
    if (this.pkiDown) throw new Error('pki-enrollment unavailable');
    return ids.flatMap((id): ApiSessionCertificateFingerprints[] => (this.certs.has(id) ? [{ apiSessionId: id, fingerprints: this.certs.get(id)! }] : []));
  };
}

interface Pushes {
  added: LegacyApiSession[][];
  updated: LegacyApiSession[][];
  removed: { id: string; token: string }[][];
}

const session = (id: string, prints: string[] = []): LegacyApiSession => ({ id, token: `token-${id}`, identityId: `identity-${id}`, certFingerprints: prints });
const prints = (list: LegacyApiSession[][]) => list.flat().map((s) => [s.id, s.certFingerprints]);

describe('legacy API sessions pushed to routers', () => {
  let bus: InProcessEventBus;
  let peers: FakePeers;
  let pushes: Pushes;
  let problems: string[];
  let legacy: LegacySessions;

  beforeEach(() => {
    bus = createInProcessBus();
    peers = new FakePeers();
    pushes = { added: [], updated: [], removed: [] };
    problems = [];
    const sink: LegacySessionSink = {
      added: (s) => void pushes.added.push(s),
      updated: (s) => void pushes.updated.push(s),
      removed: (s) => void pushes.removed.push(s),
    };
    legacy = new LegacySessions(peers as unknown as Peers, sink, (m) => void problems.push(m));
  });
  afterEach(async () => {
    await legacy.stop();
    await bus.close();
  });

  const certEvent = (type: 'created' | 'deleted', apiSessionId: string) =>
    bus.publish(newChangeEvent('pki-enrollment', `api-session-certificate.${type}`, { certificateId: `cert-${apiSessionId}`, apiSessionId, identityId: `identity-${apiSessionId}` }));

  it("carry the identity's certificate fingerprints and the session's own certificates' ones", async () => {
    peers.sessions = [session('a', ['1111']), session('b')];
    peers.certs.set('a', ['aaaa', '1111']);
    await legacy.start(bus);
    expect(prints(pushes.added)).toEqual([['a', ['1111', 'aaaa']], ['b', []]]);
    expect(legacy.byTokenValue('token-a')?.certFingerprints).toEqual(['1111', 'aaaa']);

    peers.sessions.push(session('c', ['2222']));
    peers.certs.set('c', ['cccc']);
    await bus.publish(newChangeEvent('identity-auth', 'api-session.created', { id: 'c', apiSessionId: 'c', identityId: 'identity-c' }));
    await bus.idle();
    expect(prints(pushes.added.slice(1))).toEqual([['c', ['2222', 'cccc']]]);
  });

  it('a certificate created or deleted pushes the session again with its new fingerprints (ApiSessionUpdated)', async () => {
    peers.sessions = [session('a', ['1111'])];
    await legacy.start(bus);
    peers.certs.set('a', ['aaaa']);
    await certEvent('created', 'a');
    await bus.idle();
    expect(prints(pushes.updated)).toEqual([['a', ['1111', 'aaaa']]]);
    expect(legacy.all().map((s) => s.certFingerprints)).toEqual([['1111', 'aaaa']]);

    peers.certs.delete('a');
    await certEvent('deleted', 'a');
    await bus.idle();
    expect(prints(pushes.updated)).toEqual([['a', ['1111', 'aaaa']], ['a', ['1111']]]);
    // nothing changed: nothing pushed; a session not pushed (yet) is not asked about
    await certEvent('created', 'a');
    await certEvent('created', 'unknown');
    await bus.idle();
    expect(pushes.updated).toHaveLength(2);
    expect(peers.certCalls.flat()).not.toContain('unknown');
    // the periodic reload converges a missed event
    peers.certs.set('a', ['bbbb']);
    await legacy.reload();
    expect(prints(pushes.updated.slice(2))).toEqual([['a', ['1111', 'bbbb']]]);
    expect(problems).toEqual([]);
  });

  it('while pki-enrollment does not answer, sessions keep the certificate fingerprints they had and new ones go out with their identity\'s; the next reload converges', async () => {
    peers.sessions = [session('a', ['1111'])];
    peers.certs.set('a', ['aaaa']);
    await legacy.start(bus);
    peers.pkiDown = true;
    peers.sessions.push(session('b', ['2222']));
    await legacy.reload();
    expect(prints(pushes.added)).toEqual([['a', ['1111', 'aaaa']], ['b', ['2222']]]);
    expect(pushes.updated).toEqual([]);
    peers.sessions.push(session('c', ['3333']));
    await bus.publish(newChangeEvent('identity-auth', 'api-session.created', { id: 'c', apiSessionId: 'c', identityId: 'identity-c' }));
    await bus.idle();
    expect(prints(pushes.added.slice(2))).toEqual([['c', ['3333']]]);
    expect(problems.length).toBeGreaterThan(0);

    peers.pkiDown = false;
    peers.certs.set('b', ['bbbb']);
    await legacy.reload();
    expect(prints(pushes.updated)).toEqual([['b', ['2222', 'bbbb']]]);
    expect(legacy.all().map((s) => [s.id, s.certFingerprints])).toEqual([['a', ['1111', 'aaaa']], ['b', ['2222', 'bbbb']], ['c', ['3333']]]);
  });

  it('asks pki-enrollment about at most 1000 sessions a call', async () => {
    peers.sessions = Array.from({ length: 2500 }, (_, i) => session(`s${String(i).padStart(4, '0')}`));
    peers.certs.set('s2499', ['ffff']);
    await legacy.start(bus);
    expect(peers.certCalls.map((c) => c.length)).toEqual([1000, 1000, 500]);
    expect(legacy.byTokenValue('token-s2499')?.certFingerprints).toEqual(['ffff']);
  });
});
