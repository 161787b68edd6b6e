import type { X509Certificate } from 'node:crypto';
import { commonNameOf, parseGeneralNames } from './csr.js';
import { TAG, certSubjectDer, children, content, decodeOid, readTlv } from '@ziti/x509';

/** A CA's `externalIdClaim`: where in a client certificate its identity's externalId is read. */
export interface ExternalIdClaimSpec {
  location: string;
  matcher: string;
  matcherCriteria: string;
  parser: string;
  parserCriteria: string;
  index: number;
}

export const LOCATIONS = ['COMMON_NAME', 'SAN_URI', 'SAN_EMAIL'] as const;
export const MATCHERS = ['ALL', 'PREFIX', 'SUFFIX', 'SCHEME'] as const;
export const PARSERS = ['NONE', 'SPLIT'] as const;

/** Why a claim definition is unusable (field, reason), or undefined when it is fine. */
export function claimProblem(c: ExternalIdClaimSpec): { field: string; reason: string; value: unknown } | undefined {
  const f = (field: string, reason: string, value: unknown) => ({ field: `externalIdClaim.${field}`, reason, value });
  if (!(LOCATIONS as readonly string[]).includes(c.location)) return f('location', `location must be one of ${LOCATIONS.join(', ')}`, c.location);
  if (!(MATCHERS as readonly string[]).includes(c.matcher)) return f('matcher', `matcher must be one of ${MATCHERS.join(', ')}`, c.matcher);
  const uri = c.location === 'SAN_URI';
  if (uri ? !['ALL', 'SCHEME'].includes(c.matcher) : c.matcher === 'SCHEME') {
    return f('matcher', `unsupported matcher [${c.matcher}] for location [${c.location}]`, c.matcher);
  }
  if (c.matcher !== 'ALL' && !c.matcherCriteria) return f('matcherCriteria', `invalid criteria [] for matcher [${c.matcher}]`, c.matcherCriteria);
  if (!(PARSERS as readonly string[]).includes(c.parser)) return f('parser', `parser must be one of ${PARSERS.join(', ')}`, c.parser);
  if (c.parser === 'SPLIT' && !c.parserCriteria) return f('parserCriteria', `invalid criteria [] for parser [${c.parser}]`, c.parserCriteria);
  if (!Number.isInteger(c.index) || c.index < 0) return f('index', 'index must be 0 or greater', c.index);
  return undefined;
}

function sansOf(cert: X509Certificate): { uri: string[]; email: string[] } {
  const der = cert.raw;
  const [tbs] = children(der, readTlv(der));
  for (const part of children(der, tbs!)) {
    if (part.tag !== 0xa3) continue;
    const [exts] = children(der, part);
    for (const ext of children(der, exts!)) {
      const fields = children(der, ext);
      if (decodeOid(content(der, fields[0]!)) !== '2.5.29.17') continue;
      const value = fields[fields.length - 1]!;
      if (value.tag === TAG.OCTET_STRING) return parseGeneralNames(Buffer.from(content(der, value)));
    }
  }
  return { uri: [], email: [] };
}

/** The common name of a certificate's subject. */
export function certCommonName(cert: X509Certificate): string {
  return commonNameOf(certSubjectDer(cert.raw));
}

/**
 * Reads the claims a definition selects from a certificate (locate, match, parse, as the
 * controller's x509-claims), and returns the one at `index`, or undefined when there is none.
 */
export function externalIdOf(cert: X509Certificate, c: ExternalIdClaimSpec): string | undefined {
  if (claimProblem(c)) return undefined;
  let values: string[];
  if (c.location === 'COMMON_NAME') values = [certCommonName(cert)].filter((v) => v.length > 0);
  else if (c.location === 'SAN_EMAIL') values = sansOf(cert).email;
  else values = sansOf(cert).uri;
  const matched = values.filter((v) => {
    switch (c.matcher) {
      case 'PREFIX':
        return v.startsWith(c.matcherCriteria);
      case 'SUFFIX':
        return v.endsWith(c.matcherCriteria);
      case 'SCHEME':
        return v.toLowerCase().startsWith(`${c.matcherCriteria.toLowerCase()}:`);
      default:
        return true;
    }
  });
  const parsed = c.parser === 'SPLIT' ? matched.flatMap((v) => v.split(c.parserCriteria)) : matched;
  return parsed[c.index];
}
