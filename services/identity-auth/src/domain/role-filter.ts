import { ApiError } from '@ziti/errors';
import type { RoleFilter } from './model.js';

/**
 * `roleFilter` (repeatable: `#attr`, `@id`, `#all`) and `roleSemantic` (`AllOf` default, `AnyOf`)
 * of entity lists (§4.1). Undefined when no roleFilter is given. An entity is a candidate when its
 * id is one of the `@` ids, or `#all` is given, or its attributes contain all (AllOf) / any
 * (AnyOf) of the `#` attributes.
 */
export function parseRoleFilter(values: readonly string[], semantic: string | undefined): RoleFilter | undefined {
  if (values.length === 0) return undefined;
  let sem: RoleFilter['semantic'];
  if (semantic === undefined || semantic === '' || semantic === 'AllOf') sem = 'AllOf';
  else if (semantic === 'AnyOf') sem = 'AnyOf';
  else throw ApiError.field('roleSemantic', 'roleSemantic should be one of [AllOf AnyOf]', semantic);
  const filter: RoleFilter = { ids: [], attributes: [], all: false, semantic: sem };
  for (const v of values) {
    if (v === '#all') filter.all = true;
    else if (v.startsWith('#') && v.length > 1) filter.attributes.push(v.slice(1));
    else if (v.startsWith('@') && v.length > 1) filter.ids.push(v.slice(1));
    else {
      throw ApiError.field(
        'roleFilter',
        'role entries must prefixed with # (to indicate role attributes) or @ (to indicate a name or id)',
        v,
      );
    }
  }
  return filter;
}
