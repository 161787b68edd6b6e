import { ApiError } from '@ziti/errors';
import { normalizeName } from '@ziti/http-kit';

/**
 * The name of a config type, config, service, router or policy in its stored form
 * (`normalizeName`: NFC, no surrounding white space), so names that differ only by those are one
 * name to the unique indexes. Create, PUT and PATCH all pass through it. Missing, empty or only
 * white space → 400 `name is required`.
 */
export function requireName(name: unknown): string {
  const normalized = typeof name === 'string' ? normalizeName(name) : '';
  if (normalized === '') throw ApiError.field('name', 'name is required', name ?? '');
  return normalized;
}
