/**
 * What never reaches a log line. Two layers:
 *
 * - Fields, by name (pino's `redact`): wherever a record's object carries one of these keys at the
 *   top level, one level down (`{ body: { password } }`) or in request headers, its value is
 *   replaced by `[Redacted]`.
 * - Text (`scrubSecrets`): messages and error messages/stacks are free text that may quote a
 *   secret (a driver error with a connection URL, a token echoed in a message); credentials in
 *   URLs, JWTs (enrollment tokens, OTTs) and PEM private keys are cut out of them.
 */

/** Keys whose values are secrets wherever they appear. */
const SECRET_KEYS = [
  'password',
  'newPassword',
  'currentPassword',
  'token',
  'sessionToken',
  'apiSessionToken',
  'accessToken',
  'refreshToken',
  'idToken',
  'jwt',
  'enrollmentJwt',
  'ott',
  'authorization',
  'cookie',
  'privateKey',
  'privateKeyPem',
  'keyPem',
  'secret',
  'internalSecret',
  'clientSecret',
  'mfaSecret',
  'totp',
  'totpCode',
  'mfaCode',
  'recoveryCode',
  'recoveryCodes',
  'databaseUrl',
  'DATABASE_URL',
];

/** Request headers that carry credentials: the session token, bearer tokens, cookies, the gateway's signed principal. */
const SECRET_HEADERS = ['authorization', 'cookie', 'set-cookie', 'zt-session', 'x-ziti-principal', 'x-ziti-client-cert'];

/** Keys that are secrets only inside a request body (`code` is also an error code elsewhere): the TOTP code of `/authenticate/mfa`. */
const SECRET_BODY_KEYS = ['code'];

const quote = (key: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `.${key}` : `["${key}"]`);
const path = (prefix: string, key: string) => (prefix === '' ? quote(key).replace(/^\./, '') : `${prefix}${quote(key)}`);

/** The redact paths of pino: every secret key at the top level and one level down, headers and bodies where records put them. */
export const REDACT_PATHS: string[] = [
  ...SECRET_KEYS.flatMap((k) => [path('', k), path('*', k)]),
  ...SECRET_HEADERS.flatMap((h) => [path('headers', h), path('req.headers', h), path('*.headers', h)]),
  ...SECRET_BODY_KEYS.flatMap((k) => [path('body', k), path('*.body', k)]),
];

export const REDACTED = '[Redacted]';

const URL_CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]*@/gi;
const JWT = /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;
const PEM_PRIVATE_KEY = /-----BEGIN ([A-Z ]*)PRIVATE KEY-----[\s\S]*?(?:-----END \1PRIVATE KEY-----|$)/g;

/**
 * `text` with secrets cut out: the password of a URL (`postgresql://u:secret@h` keeps
 * `postgresql://u:[Redacted]@h`), JWTs and PEM private keys. Cheap when there is nothing to cut
 * (each pattern runs only when its marker is present).
 */
export function scrubSecrets(text: string): string {
  let out = text;
  if (out.includes('://')) out = out.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
  if (out.includes('eyJ')) out = out.replace(JWT, REDACTED);
  if (out.includes('PRIVATE KEY-----')) out = out.replace(PEM_PRIVATE_KEY, REDACTED);
  return out;
}
