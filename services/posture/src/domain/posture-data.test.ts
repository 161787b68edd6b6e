import { LIMITS, applyResponses, cleanHex, emptyPostureData, recordMfa } from './posture-data.js';

const T = new Date('2026-11-22T10:00:00.000Z');

describe('posture data', () => {
  it('reports a change only when evaluated values change, not on a resubmission', () => {
    const first = applyResponses(emptyPostureData(), [{ typeId: 'OS', id: 'o', type: 'Linux', version: '6.1.0' }], 'as1', T);
    expect(first.changed).toBe(true);
    const again = applyResponses(first.data, [{ typeId: 'OS', id: 'o', type: 'Linux', version: '6.1.0' }], 'as1', new Date(T.getTime() + 1000));
    expect(again.changed).toBe(false);
    expect(again.data.os?.lastUpdatedAt).toBe('2026-11-22T10:00:01.000Z');
    expect(applyResponses(again.data, [{ typeId: 'DOMAIN', id: 'd', domain: 'x' }], 'as1', T).changed).toBe(true);
  });

  it('upserts processes by check and path, cleaning hashes and fingerprints', () => {
    let pd = emptyPostureData();
    pd = applyResponses(pd, [{ typeId: 'PROCESS', id: 'p', path: '/a', isRunning: true, hash: 'AB:CD', signerFingerprints: ['0F-F0'] }], 'as1', T).data;
    pd = applyResponses(pd, [{ typeId: 'PROCESS', id: 'p', path: '/a', isRunning: false, hash: 'abcd' }], 'as1', T).data;
    expect(pd.processes).toEqual([{ postureCheckId: 'p', path: '/a', isRunning: false, hash: 'abcd', signerFingerprints: [], lastUpdatedAt: T.toISOString() }]);
    expect(cleanHex('Zz:00-Ff')).toBe('00ff');
  });

  it('bounds processes, API sessions and MAC addresses, keeping the newest', () => {
    let pd = emptyPostureData();
    for (let i = 0; i < LIMITS.processes + 5; i++) {
      pd = applyResponses(pd, [{ typeId: 'PROCESS', id: `p${i}`, path: '/x', isRunning: true }], 'as1', new Date(T.getTime() + i)).data;
    }
    expect(pd.processes).toHaveLength(LIMITS.processes);
    expect(pd.processes.some((p) => p.postureCheckId === 'p0')).toBe(false);
    for (let i = 0; i < LIMITS.apiSessions + 3; i++) recordMfa(pd, `as-${i}`, T.toISOString(), new Date(T.getTime() + i));
    expect(Object.keys(pd.apiSessions)).toHaveLength(LIMITS.apiSessions);
    expect(pd.apiSessions['as-0']).toBeUndefined();
    const macs = Array.from({ length: 200 }, (_, i) => `00:00:00:00:00:${i.toString(16).padStart(2, '0')}`);
    expect(applyResponses(pd, [{ typeId: 'MAC', id: 'm', macAddresses: macs }], 'as1', T).data.mac?.addresses).toHaveLength(LIMITS.macAddresses);
  });

  it('stamps wake and unlock on the API session, and records MFA once', () => {
    const r = applyResponses(emptyPostureData(), [{ typeId: 'ENDPOINT_STATE', id: 's', woken: true }], 'as1', T);
    expect([r.woken, r.unlocked, r.data.apiSessions.as1?.wokenAt]).toEqual([true, false, T.toISOString()]);
    expect(recordMfa(r.data, 'as1', T.toISOString(), T)).toBe(true);
    expect(recordMfa(r.data, 'as1', T.toISOString(), T)).toBe(false);
  });
});
