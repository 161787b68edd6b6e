/**
 * What never reaches a log line. Two layers:
 *
 * - Fields, by name: wherever a record's object carries one of these keys, its value is replaced
 *   by `[Redacted]`. pino's `redact` does the top level (`REDACT_PATHS`, fixed paths: cheap);
 *   `redactNested` does the levels below (`{ body: { password } }`, request headers), walking plain
 *   objects, because pino's wildcard paths (`*.password`) cost about twenty times a whole line.
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

const quote = (key: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? key : `["${key}"]`);

/** The redact paths of pino: every secret key at the top level of a record. */
export const REDACT_PATHS: string[] = SECRET_KEYS.map(quote);

const SECRET_ANYWHERE = new Set([...SECRET_KEYS, ...SECRET_HEADERS]);
const SECRET_IN_BODY = new Set(SECRET_BODY_KEYS);

/** Levels below the top that `redactNested` walks. */
const MAX_DEPTH = 4;

const isPlainObject = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
};

function redactObject(value: Record<string, unknown>, inBody: boolean, depth: number): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in value) {
    const v = value[key];
    let next = v;
    if (v !== undefined && v !== null && (SECRET_ANYWHERE.has(key) || (inBody && SECRET_IN_BODY.has(key)))) next = REDACTED;
    else if (depth < MAX_DEPTH && isPlainObject(v)) next = redactObject(v, key === 'body', depth + 1);
    if (next !== v) {
      out ??= { ...value };
      out[key] = next;
    }
  }
  return out ?? value;
}

/**
 * A record's object with the secrets below its top level redacted (plain objects only, a few
 * levels deep). The caller's objects are never changed: what holds a secret is copied.
 */
export function redactNested(record: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const key in record) {
    const v = record[key];
    if (!isPlainObject(v)) continue;
    const next = redactObject(v, key === 'body', 1);
    if (next !== v) {
      out ??= { ...record };
      out[key] = next;
    }
  }
  return out ?? record;
}

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
