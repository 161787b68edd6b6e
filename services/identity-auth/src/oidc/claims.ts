/** Token lifetimes of OpenZiti's OIDC provider (`common.Default*TokenDuration`). */
export const ACCESS_TOKEN_SECONDS = 30 * 60;
export const REFRESH_TOKEN_SECONDS = 24 * 60 * 60;
export const ID_TOKEN_SECONDS = 30 * 60;
/** The longest any token lives: how long a revocation, or a retired key, must be kept. */
export const MAX_TOKEN_SECONDS = Math.max(ACCESS_TOKEN_SECONDS, REFRESH_TOKEN_SECONDS, ID_TOKEN_SECONDS);

/** `z_t`: access, refresh, service (session), TOTP. */
export const TOKEN_TYPE = { access: 'a', refresh: 'r', service: 's', totp: 't' } as const;

/** The client ids of OpenZiti's native clients (`common.ClaimClientIdOpenZiti`, `ClaimLegacyNative`). */
export const OIDC_CLIENT_IDS = ['openziti', 'native'] as const;

/** OpenZiti's custom claims of access and refresh tokens (`common.CustomClaims`). */
export interface ZitiClaims {
  z_asid: string;
  z_eid?: string;
  z_ia?: boolean;
  z_ct?: string[];
  z_aid?: string;
  z_t: string;
  z_cfs: string[];
  z_acf?: string;
  scopes?: string[];
  z_sdk: Record<string, unknown> | null;
  z_env: Record<string, unknown> | null;
  z_ra: string;
  z_ice: boolean;
  z_cae?: boolean;
  z_authid?: string;
  z_cer: boolean;
  z_ckrr: boolean;
  z_iccc: boolean;
}

/** Registered claims of access and refresh tokens. */
export interface TokenClaims {
  iss: string;
  sub: string;
  aud: string[];
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  auth_time: number;
  amr: string[];
  client_id: string;
}

export type AccessClaims = TokenClaims & ZitiClaims;
export type RefreshClaims = TokenClaims & ZitiClaims;

/** The claims of a TOTP token (`common.TotpClaims`): no expiry, scoped to its API session. */
export interface TotpClaims {
  iss: string;
  sub: string;
  aud: string[];
  iat: number;
  jti: string;
  z_asid: string;
  z_t: 't';
}
