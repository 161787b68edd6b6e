import { ApiError } from '@ziti/errors';

/** `AllOf` (the store default) or `AnyOf`: how a policy's `#attr` roles select entities (§5.1). */
export type Semantic = 'AllOf' | 'AnyOf';

/** A policy role list taken apart: `@id` entries, `#attr` entries, and whether it is `#all`. */
export interface Selector {
  ids: string[];
  attrs: string[];
  all: boolean;
  semantic: Semantic;
}

export const SEMANTICS: readonly Semantic[] = ['AllOf', 'AnyOf'];

/** `semantic` as the spec enum; go-openapi's wording on anything else. */
export function parseSemantic(value: unknown, field = 'semantic'): Semantic {
  if (value === undefined || value === null || value === '') return 'AllOf';
  if (value === 'AllOf' || value === 'AnyOf') return value;
  throw ApiError.field(field, `${field} in body should be one of [AllOf AnyOf]`, value);
}

/**
 * Checks a policy role list (§5.1): every entry is `#attr` or `@id`; `#all` only alone.
 * Duplicates are dropped, order kept. Returns the list as stored.
 */
export function validateRoles(field: string, roles: readonly string[] | null | undefined): string[] {
  const list = [...new Set((roles ?? []).filter((r) => typeof r === 'string'))];
  for (const r of list) {
    if (!(r.startsWith('#') || r.startsWith('@')) || r.length < 2) {
      throw ApiError.field(field, 'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)', r);
    }
  }
  if (list.includes('#all') && list.length > 1) {
    throw ApiError.field(field, 'if using #all, it should be the only role specified', list);
  }
  return list;
}

/** Entity role attributes: plain strings, never starting with `#` or `@`. Duplicates dropped. */
export function validateAttributes(attrs: readonly string[] | null | undefined, field = 'roleAttributes'): string[] {
  const list = [...new Set((attrs ?? []).filter((a) => typeof a === 'string'))];
  for (const a of list) {
    if (a.startsWith('#')) throw ApiError.field(field, 'role attributes may not be prefixed with #', a);
    if (a.startsWith('@')) throw ApiError.field(field, 'role attributes may not be prefixed with @', a);
  }
  return list;
}

export function selector(roles: readonly string[], semantic: Semantic): Selector {
  const s: Selector = { ids: [], attrs: [], all: false, semantic };
  for (const r of roles) {
    if (r === '#all') s.all = true;
    else if (r.startsWith('#')) s.attrs.push(r.slice(1));
    else if (r.startsWith('@')) s.ids.push(r.slice(1));
  }
  return s;
}

/** Whether a selector picks an entity (the same rule as the SQL function `role_match`). */
export function selects(s: Selector, id: string, attrs: readonly string[]): boolean {
  if (s.all || s.ids.includes(id)) return true;
  if (s.attrs.length === 0) return false;
  return s.semantic === 'AnyOf' ? s.attrs.some((a) => attrs.includes(a)) : s.attrs.every((a) => attrs.includes(a));
}

/** `roleFilter` / `roleSemantic` of entity lists (§4.1): undefined when no roleFilter is given. */
export function parseRoleFilter(values: readonly string[], semantic: string | undefined): Selector | undefined {
  if (values.length === 0) return undefined;
  let sem: Semantic;
  if (semantic === undefined || semantic === '' || semantic === 'AllOf') sem = 'AllOf';
  else if (semantic === 'AnyOf') sem = 'AnyOf';
  else throw ApiError.field('roleSemantic', 'roleSemantic should be one of [AllOf AnyOf]', semantic);
  for (const v of values) {
    if (!(v.startsWith('#') || v.startsWith('@')) || v.length < 2) {
      throw ApiError.field('roleFilter', 'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)', v);
    }
  }
  return selector(values, sem);
}

/** `*RolesDisplay`: `#x` shows as itself, `@id` as `@<name>` (the id when the entity is unknown). */
export function rolesDisplay(roles: readonly string[], names: ReadonlyMap<string, string>): { role: string; name: string }[] {
  return roles.map((role) => {
    if (!role.startsWith('@')) return { role, name: role };
    const name = names.get(role.slice(1));
    return { role, name: `@${name ?? role.slice(1)}` };
  });
}
