import { isOidcPath, normalisePath, splitUrl } from './paths.js';

describe('normalisePath', () => {
  it.each([
    // [request path, normalised path, api, relative]
    ['/', '/edge/client/v1/version', 'client', '/version'],
    ['//', '/edge/client/v1/version', 'client', '/version'],
    ['/version', '/edge/client/v1/version', 'client', '/version'],
    ['/authenticate', '/edge/client/v1/authenticate', 'client', '/authenticate'],
    ['/current-identity/', '/edge/client/v1/current-identity/', 'client', '/current-identity/'],
    ['/edge/client/v1', '/edge/client/v1/version', 'client', '/version'],
    ['/edge/client/v1/', '/edge/client/v1/version', 'client', '/version'],
    ['/edge/management/v1', '/edge/management/v1/version', 'management', '/version'],
    ['/edge/management/v1/', '/edge/management/v1/version', 'management', '/version'],
    ['/edge/management/v1/identities', '/edge/management/v1/identities', 'management', '/identities'],
    ['/edge/v1', '/edge/client/v1/version', 'client', '/version'],
    ['/edge/v1/', '/edge/client/v1/version', 'client', '/version'],
    ['/edge/v1/services', '/edge/client/v1/services', 'client', '/services'],
    ['//edge//client///v1//services', '/edge/client/v1/services', 'client', '/services'],
    ['/edge/management/v1//identities//abc', '/edge/management/v1/identities/abc', 'management', '/identities/abc'],
    ['/.well-known/est/cacerts', '/edge/client/v1/.well-known/est/cacerts', 'client', '/.well-known/est/cacerts'],
    ['/edge/client/v1/.well-known/est/cacerts', '/edge/client/v1/.well-known/est/cacerts', 'client', '/.well-known/est/cacerts'],
    ['/edges', '/edge/client/v1/edges', 'client', '/edges'],
    ['/fabricate', '/edge/client/v1/fabricate', 'client', '/fabricate'],
    ['/fabric/v1/routers', '/fabric/v1/routers', 'fabric', '/routers'],
    ['/fabric/v1//routers', '/fabric/v1/routers', 'fabric', '/routers'],
    ['/fabric/v1', '/fabric/v1', 'fabric', ''],
  ])('%s → %s', (raw, path, api, relative) => {
    expect(normalisePath(raw)).toEqual({ path, api, relative });
  });

  it.each([
    ['/fabric/v2/routers', '/fabric/v2/routers'],
    ['/.well-known/openid-configuration', '/.well-known/openid-configuration'],
    ['/edge/other/v1/x', '/edge/other/v1/x'],
    ['/edge', '/edge'],
    ['/edge/client/v2/version', '/edge/client/v2/version'],
  ])('%s is outside every API', (raw, path) => {
    expect(normalisePath(raw)).toEqual({ path });
  });
});

describe('splitUrl', () => {
  it('separates the query string', () => {
    expect(splitUrl('/a/b?x=1&y=2')).toEqual({ path: '/a/b', search: '?x=1&y=2' });
    expect(splitUrl('/a')).toEqual({ path: '/a', search: '' });
  });

  it('accepts an absolute-form request target', () => {
    expect(splitUrl('https://ctrl:1280/version?x=1')).toEqual({ path: '/version', search: '?x=1' });
  });
});

describe('isOidcPath', () => {
  it('is /oidc and every path under it, nothing else', () => {
    for (const p of ['/oidc', '/oidc/', '/oidc/.well-known/openid-configuration', '/oidc/login/password', '/oidc/oauth/token']) expect(isOidcPath(p)).toBe(true);
    for (const p of ['/oidcx', '/oidc-foo', '/.well-known/openid-configuration', '/edge/client/v1/oidc', '/OIDC/keys', '/']) expect(isOidcPath(p)).toBe(false);
  });
});
