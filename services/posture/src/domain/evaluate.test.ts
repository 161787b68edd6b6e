import { evaluateCheck, MFA_PROMPT_GRACE_MS } from './evaluate.js';
import type { PostureCheck, PostureCheckData } from './model.js';
import { applyResponses, emptyPostureData, type PostureData, recordMfa } from './posture-data.js';

const T0 = new Date('2026-11-22T10:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

function check(data: PostureCheckData, id = 'pc1'): PostureCheck {
  return { id, name: id, roleAttributes: [], tags: {}, version: 1, data, createdAt: T0, updatedAt: T0 };
}

function reported(...responses: Parameters<typeof applyResponses>[1]): PostureData {
  return applyResponses(emptyPostureData(), responses, 'as1', T0).data;
}

const passes = (c: PostureCheck, pd: PostureData, now = T0, apiSessionId = 'as1') => evaluateCheck(c, pd, apiSessionId, now).passing;

describe('OS', () => {
  const os = check({ typeId: 'OS', operatingSystems: [{ type: 'Windows', versions: ['>=10.0.0 <11.0.0'] }, { type: 'Linux', versions: [] }] });
  it('passes a listed type (case-insensitive) whose version satisfies a range, or a type listed without versions', () => {
    expect(passes(os, reported({ typeId: 'OS', id: 'x', type: 'windows', version: '10.0.19041' }))).toBe(true);
    expect(passes(os, reported({ typeId: 'OS', id: 'x', type: 'Linux', version: 'anything' }))).toBe(true);
  });
  it('fails another type, a version outside the ranges, an unparsable version, or no data', () => {
    expect(passes(os, reported({ typeId: 'OS', id: 'x', type: 'macOS', version: '10.0.0' }))).toBe(false);
    expect(passes(os, reported({ typeId: 'OS', id: 'x', type: 'Windows', version: '11.0.0' }))).toBe(false);
    expect(passes(os, reported({ typeId: 'OS', id: 'x', type: 'Windows', version: '10.0' }))).toBe(false);
    expect(passes(os, emptyPostureData())).toBe(false);
  });
});

describe('DOMAIN and MAC', () => {
  it('compares domains case-insensitively', () => {
    const c = check({ typeId: 'DOMAIN', domains: ['Corp.Example'] });
    expect(passes(c, reported({ typeId: 'DOMAIN', id: 'x', domain: 'corp.EXAMPLE' }))).toBe(true);
    expect(passes(c, reported({ typeId: 'DOMAIN', id: 'x', domain: 'other' }))).toBe(false);
  });
  it('normalises MAC addresses to lower-case hex on both sides', () => {
    const c = check({ typeId: 'MAC', macAddresses: ['AA-BB-CC-DD-EE-FF'] });
    expect(passes(c, reported({ typeId: 'MAC', id: 'x', macAddresses: ['11:22:33:44:55:66', 'aa:bb:cc:dd:ee:ff'] }))).toBe(true);
    expect(passes(c, reported({ typeId: 'MAC', id: 'x', macAddresses: ['aa:bb:cc:dd:ee:00'] }))).toBe(false);
  });
});

describe('PROCESS', () => {
  const c = check({ typeId: 'PROCESS', process: { osType: 'Windows', path: 'C:\\a.exe', hashes: ['ABCD'], signerFingerprint: 'FF:00' } }, 'proc');
  it('passes a running process of this check with a listed hash and the signer', () => {
    expect(passes(c, reported({ typeId: 'PROCESS', id: 'proc', path: 'C:\\a.exe', isRunning: true, hash: 'abcd', signerFingerprints: ['ff00'] }))).toBe(true);
  });
  it('fails when not running, another hash, another signer, or reported for another check', () => {
    const base = { typeId: 'PROCESS' as const, id: 'proc', path: 'C:\\a.exe', isRunning: true, hash: 'abcd', signerFingerprints: ['ff00'] };
    expect(passes(c, reported({ ...base, isRunning: false }))).toBe(false);
    expect(passes(c, reported({ ...base, hash: 'beef' }))).toBe(false);
    expect(passes(c, reported({ ...base, signerFingerprints: ['aa'] }))).toBe(false);
    expect(passes(c, reported({ ...base, id: 'other' }))).toBe(false);
  });
});

describe('PROCESS_MULTI', () => {
  const processes = [
    { osType: 'Linux', path: '/a', hashes: [], signerFingerprints: [] },
    { osType: 'Linux', path: '/b', hashes: ['01'], signerFingerprints: [] },
  ];
  const running = (path: string, hash = '01') => ({ typeId: 'PROCESS' as const, id: 'm', path, isRunning: true, hash });
  it('AllOf needs every process, matched by path', () => {
    const c = check({ typeId: 'PROCESS_MULTI', semantic: 'AllOf', processes }, 'm');
    expect(passes(c, reported(running('/a'), running('/b')))).toBe(true);
    expect(passes(c, reported(running('/a')))).toBe(false);
    expect(passes(c, reported(running('/a'), running('/b', '02')))).toBe(false);
  });
  it('AnyOf needs one', () => {
    const c = check({ typeId: 'PROCESS_MULTI', semantic: 'AnyOf', processes }, 'm');
    expect(passes(c, reported(running('/b')))).toBe(true);
    expect(passes(c, reported(running('/c')))).toBe(false);
  });
});

describe('MFA', () => {
  const mfa = (timeoutSeconds: number, promptOnWake = false, promptOnUnlock = false) =>
    check({ typeId: 'MFA', timeoutSeconds, promptOnWake, promptOnUnlock, ignoreLegacyEndpoints: false });
  const withMfa = (passedAt: Date, pd = emptyPostureData()) => {
    recordMfa(pd, 'as1', passedAt.toISOString(), passedAt);
    return pd;
  };

  it('fails without MFA in this API session; passes once passed, for that API session only', () => {
    expect(evaluateCheck(mfa(-1), emptyPostureData(), 'as1', T0)).toEqual({ passing: false, timeout: -1, timeoutRemaining: -1 });
    const pd = withMfa(T0);
    expect(passes(mfa(-1), pd)).toBe(true);
    expect(passes(mfa(-1), pd, T0, 'as2')).toBe(false);
  });

  it('times out: passing within the timeout, failing once it lapsed, with the seconds remaining', () => {
    const c = mfa(60);
    const pd = withMfa(T0);
    expect(evaluateCheck(c, pd, 'as1', at(20_000))).toEqual({ passing: true, timeout: 60, timeoutRemaining: 40 });
    expect(evaluateCheck(c, pd, 'as1', at(61_000))).toEqual({ passing: false, timeout: 60, timeoutRemaining: 0 });
    expect(evaluateCheck(c, emptyPostureData(), 'as1', T0).timeoutRemaining).toBe(0);
  });

  it('re-prompts on wake: passing within the grace period after waking, failing after it until MFA again', () => {
    const c = mfa(-1, true);
    const pd = applyResponses(withMfa(T0), [{ typeId: 'ENDPOINT_STATE', id: 's', woken: true }], 'as1', at(1000)).data;
    expect(passes(c, pd, at(1000 + MFA_PROMPT_GRACE_MS - 1000))).toBe(true);
    expect(passes(c, pd, at(1000 + MFA_PROMPT_GRACE_MS + 1000))).toBe(false);
    recordMfa(pd, 'as1', at(2 * MFA_PROMPT_GRACE_MS).toISOString(), at(2 * MFA_PROMPT_GRACE_MS));
    expect(passes(c, pd, at(2 * MFA_PROMPT_GRACE_MS + 1000))).toBe(true);
    // An unlock does not matter to a wake-only check.
    const unlocked = applyResponses(withMfa(T0), [{ typeId: 'ENDPOINT_STATE', id: 's', unlocked: true }], 'as1', at(1000)).data;
    expect(passes(c, unlocked, at(10 * MFA_PROMPT_GRACE_MS))).toBe(true);
  });

  it('re-prompts on unlock, and the grace period shortens the timeout remaining', () => {
    const c = mfa(3600, false, true);
    const pd = applyResponses(withMfa(T0), [{ typeId: 'ENDPOINT_STATE', id: 's', unlocked: true }], 'as1', at(10_000)).data;
    expect(evaluateCheck(c, pd, 'as1', at(10_000))).toEqual({ passing: true, timeout: 3600, timeoutRemaining: MFA_PROMPT_GRACE_MS / 1000 });
    expect(passes(c, pd, at(10_000 + MFA_PROMPT_GRACE_MS + 1))).toBe(false);
  });
});
