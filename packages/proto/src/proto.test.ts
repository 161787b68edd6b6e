import { Principal, ResolveApiSessionResponse } from './index.js';

describe('generated proto', () => {
  it('round-trips a resolved principal through the wire format', () => {
    const msg: ResolveApiSessionResponse = {
      principal: Principal.fromPartial({ identityId: 'abc', isAdmin: true, permissions: ['identity.read'], expirationSeconds: 1799 }),
      cacheTtlSeconds: 30,
      wwwAuthenticate: "",
    };
    const bytes = ResolveApiSessionResponse.encode(msg).finish();
    const back = ResolveApiSessionResponse.decode(bytes);
    expect(back.cacheTtlSeconds).toBe(30);
    expect(back.principal?.identityId).toBe('abc');
    expect(back.principal?.isAdmin).toBe(true);
    expect(back.principal?.permissions).toEqual(['identity.read']);
    expect(back.principal?.expirationSeconds).toBe(1799);
    expect(back.principal?.isFullyAuthenticated).toBe(false);
  });
});
