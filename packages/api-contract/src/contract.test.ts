import { ALL_ROUTES, MODELS, common, expressPath, pathPattern } from './index.js';

const PERMISSION_ENTITIES = [
  'auth-policy', 'ca', 'config', 'config-type', 'edge-router-policy', 'enrollment', 'external-jwt-signer', 'identity',
  'posture-check', 'router', 'service', 'service-edge-router-policy', 'service-policy', 'terminator',
];

describe('the public contract', () => {
  it('declares each (api, method, path) and each (api, operationId) once', () => {
    const seenPath = new Set<string>();
    const seenOp = new Set<string>();
    for (const r of ALL_ROUTES) {
      for (const api of r.apis) {
        const pk = `${api} ${r.method} ${r.path}`;
        const ok = `${api} ${r.operationId}`;
        expect(seenPath.has(pk)).toBe(false);
        expect(seenOp.has(ok)).toBe(false);
        seenPath.add(pk);
        seenOp.add(ok);
      }
    }
  });

  it('has well-formed routes', () => {
    for (const r of ALL_ROUTES) {
      expect(r.path).toMatch(/^\/([a-z0-9.{}-]+(\/[a-zA-Z0-9.{}-]+)*)?$/);
      expect(r.apis.length).toBeGreaterThan(0);
      // Entity permissions are the names of §6.12; routes without one are admin (or admin_readonly for reads) only.
      if (r.permission) expect(PERMISSION_ENTITIES).toContain(r.permission);
      expect(r.success.status).toBeGreaterThanOrEqual(200);
      expect(r.success.status).toBeLessThan(300);
    }
  });

  it('names every model after its $id', () => {
    for (const [name, schema] of Object.entries(MODELS)) expect(schema.$id).toBe(name);
  });

  it('bounds the tags of every request body by the one tags model', () => {
    const tagFields: string[] = [];
    const walk = (schema: unknown, path: string, depth: number): void => {
      if (!schema || typeof schema !== 'object' || depth > 6) return;
      const s = schema as Record<string, unknown>;
      for (const key of ['anyOf', 'allOf']) for (const m of (s[key] as unknown[] | undefined) ?? []) walk(m, path, depth + 1);
      if (s.items) walk(s.items, `${path}[]`, depth + 1);
      for (const [k, v] of Object.entries((s.properties as Record<string, unknown> | undefined) ?? {})) {
        if (k === 'tags') {
          tagFields.push(`${path}.tags`);
          expect([path, (v as Record<string, unknown>).maxJsonBytes]).toEqual([path, common.MAX_TAGS_JSON_BYTES]);
        } else walk(v, `${path}.${k}`, depth + 1);
      }
    };
    for (const r of ALL_ROUTES) if (r.body) walk(r.body, `${r.method} ${r.path}`, 0);
    expect(tagFields.length).toBeGreaterThan(40);
  });

  it('turns path templates into matchers and express paths', () => {
    const re = pathPattern('/identities/{id}/authenticators');
    expect(re.exec('/identities/a.b-c/authenticators')?.groups?.id).toBe('a.b-c');
    expect(re.test('/identities/a/b/authenticators')).toBe(false);
    expect(re.test('/identities/x/authenticators/')).toBe(true);
    expect(expressPath('/identities/{id}/policy-advice/{serviceId}')).toBe('/identities/:id/policy-advice/:serviceId');
  });
});
