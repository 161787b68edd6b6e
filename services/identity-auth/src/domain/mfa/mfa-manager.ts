import { timingSafeEqual } from 'node:crypto';
import { ApiError } from '@ziti/errors';
import { shortId } from '@ziti/http-kit';
import type { Mfa } from '../auth-model.js';
import type { PrincipalCache, StoredMfa, Transaction, UnitOfWork } from '../ports.js';
import { MFA_COMPLETION_WINDOW_SECONDS, type MfaGuard } from './mfa-guard.js';
import type { SecretBox } from './secret-box.js';
import { newRecoveryCodes, newTotpSecret } from './totp.js';

const invalidToken = () => ApiError.of('MFA_INVALID_TOKEN');

function sameCode(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * TOTP MFA of an identity (§6.8): enrollment, verification, recovery codes, removal, second factor.
 * Every code goes through the {@link MfaGuard}: a TOTP code works once per identity, and an API
 * session that sent 10 wrong codes gets no further code accepted.
 */
export class MfaManager {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly box: SecretBox,
    private readonly cache: PrincipalCache,
    private readonly guard: MfaGuard,
  ) {}

  private open(s: StoredMfa): Mfa {
    return {
      id: s.id,
      identityId: s.identityId,
      isVerified: s.isVerified,
      secret: this.box.open(s.secret, s.identityId),
      recoveryCodes: JSON.parse(this.box.open(s.recoveryCodes, s.identityId)) as string[],
      tags: s.tags,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
    };
  }

  private sealCodes(identityId: string, codes: string[]): string {
    return this.box.seal(JSON.stringify(codes), identityId);
  }

  /** The enrollment, or 404 before one exists. */
  async detail(identityId: string): Promise<Mfa> {
    const s = await this.uow.repos.mfas.findByIdentity(identityId);
    if (!s) throw ApiError.notFound();
    return this.open(s);
  }

  /** Whether the identity has a verified enrollment. */
  async isVerified(identityId: string): Promise<boolean> {
    return (await this.uow.repos.mfas.findByIdentity(identityId))?.isVerified === true;
  }

  /** Starts an enrollment: a fresh secret and 20 recovery codes; 409 MFA_EXISTS when one exists. */
  async enroll(identityId: string): Promise<string> {
    const id = shortId();
    await this.uow.run(async (tx) => {
      if (await tx.mfas.findByIdentityForUpdate(identityId)) throw ApiError.of('MFA_EXISTS');
      await tx.mfas.create({
        id,
        identityId,
        isVerified: false,
        secret: this.box.seal(newTotpSecret(), identityId),
        recoveryCodes: this.sealCodes(identityId, newRecoveryCodes()),
        tags: {},
      });
    });
    return id;
  }

  /** The unverified enrollment (QR code, provisioning URL); 404 when none or already verified. */
  async unverified(identityId: string): Promise<Mfa> {
    const mfa = await this.detail(identityId);
    if (mfa.isVerified) throw ApiError.notFound();
    return mfa;
  }

  /** Completes enrollment with a TOTP code (recovery codes do not count) and completes the calling session. */
  async verify(identityId: string, apiSessionId: string, code: string): Promise<void> {
    const token = await this.uow.run(async (tx) => {
      const mfa = await this.locked(tx, identityId);
      if (mfa.isVerified) throw ApiError.notFound();
      await this.guard.admit(apiSessionId);
      if (!(await this.guard.acceptTotp(identityId, mfa.secret, code))) throw invalidToken();
      await tx.mfas.update(mfa.id, { isVerified: true });
      return this.completeSession(tx, apiSessionId, identityId);
    });
    await this.guard.accepted(apiSessionId);
    await this.cache.drop(token ? [token] : []);
  }

  /** The recovery codes, shown for a current TOTP code only. */
  async recoveryCodes(identityId: string, apiSessionId: string, code: string): Promise<Mfa> {
    const mfa = await this.detail(identityId);
    if (!mfa.isVerified) throw ApiError.notFound();
    await this.guard.admit(apiSessionId);
    if (!(await this.guard.acceptTotp(identityId, mfa.secret, code))) throw invalidToken();
    await this.guard.accepted(apiSessionId);
    return mfa;
  }

  /** New recovery codes, for a TOTP or an unused recovery code. */
  async regenerateRecoveryCodes(identityId: string, apiSessionId: string, code: string): Promise<void> {
    await this.uow.run(async (tx) => {
      const mfa = await this.locked(tx, identityId);
      if (!mfa.isVerified) throw ApiError.notFound();
      if (!(await this.check(mfa, apiSessionId, code))) throw invalidToken();
      await tx.mfas.update(mfa.id, { recoveryCodes: this.sealCodes(identityId, newRecoveryCodes()) });
    });
    await this.guard.accepted(apiSessionId);
  }

  /** The identity removes its enrollment; a verified one needs a TOTP or recovery code. */
  async removeOwn(identityId: string, apiSessionId: string, code: string): Promise<void> {
    const checked = await this.uow.run(async (tx) => {
      const mfa = await this.locked(tx, identityId);
      if (mfa.isVerified && !(await this.check(mfa, apiSessionId, code))) throw invalidToken();
      await tx.mfas.deleteByIdentity(identityId);
      return mfa.isVerified;
    });
    if (checked) await this.guard.accepted(apiSessionId);
  }

  /** An administrator removes any enrollment (none is not an error). */
  async removeAny(tx: Transaction, identityId: string): Promise<void> {
    await tx.mfas.deleteByIdentity(identityId);
  }

  /**
   * `POST /authenticate/mfa`: a TOTP or an unused recovery code (consumed) completes the session,
   * within {@link MFA_COMPLETION_WINDOW_SECONDS} of its creation. 409 MFA_NOT_ENROLLED without a
   * verified enrollment, 400 MFA_INVALID_TOKEN for a bad, used or late code.
   */
  async authenticate(identityId: string, apiSessionId: string, code: string): Promise<void> {
    const token = await this.uow.run(async (tx) => {
      const stored = await tx.mfas.findByIdentityForUpdate(identityId);
      if (!stored || !stored.isVerified) throw ApiError.of('MFA_NOT_ENROLLED');
      const mfa = this.open(stored);
      await this.guard.admit(apiSessionId);
      const used = code ? mfa.recoveryCodes.findIndex((c) => sameCode(c, code)) : -1;
      if (used >= 0) {
        const rest = mfa.recoveryCodes.filter((_, i) => i !== used);
        await tx.mfas.update(mfa.id, { recoveryCodes: this.sealCodes(identityId, rest) });
      } else if (!(await this.guard.acceptTotp(identityId, mfa.secret, code))) {
        throw invalidToken();
      }
      const done = await this.completeSession(tx, apiSessionId, identityId, MFA_COMPLETION_WINDOW_SECONDS);
      if (!done) throw invalidToken();
      return done;
    });
    await this.guard.accepted(apiSessionId);
    await this.cache.drop([token]);
  }

  /**
   * The second factor of an OIDC login (no API session yet): a TOTP code (recovery codes do not
   * count) of a verified enrollment, admitted by the guard under `attemptKey` (the login's future
   * API session id). False for a bad or reused code, or when there is no verified enrollment.
   */
  async acceptLoginTotp(identityId: string, attemptKey: string, code: string): Promise<boolean> {
    const stored = await this.uow.repos.mfas.findByIdentity(identityId);
    if (!stored || !stored.isVerified || !code) return false;
    await this.guard.admit(attemptKey);
    if (!(await this.guard.acceptTotp(identityId, this.open(stored).secret, code))) return false;
    await this.guard.accepted(attemptKey);
    return true;
  }

  /** Verifies an enrollment started during an OIDC login (as `verify`, without a session to complete). */
  async verifyForLogin(identityId: string, attemptKey: string, code: string): Promise<void> {
    await this.uow.run(async (tx) => {
      const mfa = await this.locked(tx, identityId);
      if (mfa.isVerified) throw ApiError.notFound();
      await this.guard.admit(attemptKey);
      if (!(await this.guard.acceptTotp(identityId, mfa.secret, code))) throw invalidToken();
      await tx.mfas.update(mfa.id, { isVerified: true });
    });
    await this.guard.accepted(attemptKey);
  }

  /**
   * A current TOTP code of the identity's verified enrollment (recovery codes do not count), through
   * the guard (single use, the session's wrong codes counted): 400 MFA_INVALID_TOKEN for an empty,
   * wrong or used code, 409 MFA_NOT_ENROLLED without a verified enrollment (the TOTP token).
   */
  async checkTotp(identityId: string, apiSessionId: string, code: string): Promise<void> {
    if (!code) throw invalidToken();
    const stored = await this.uow.repos.mfas.findByIdentity(identityId);
    if (!stored || !stored.isVerified) throw ApiError.of('MFA_NOT_ENROLLED');
    const mfa = this.open(stored);
    await this.guard.admit(apiSessionId);
    if (!(await this.guard.acceptTotp(identityId, mfa.secret, code))) throw invalidToken();
    await this.guard.accepted(apiSessionId);
  }

  /**
   * A TOTP or a recovery code, after reserving the session's attempt (callers replace or delete the
   * recovery codes afterwards, so none stays usable).
   */
  private async check(mfa: Mfa, apiSessionId: string, code: string): Promise<boolean> {
    await this.guard.admit(apiSessionId);
    if (!code) return false;
    if (mfa.recoveryCodes.some((c) => sameCode(c, code))) return true;
    return this.guard.acceptTotp(mfa.identityId, mfa.secret, code);
  }

  private async locked(tx: Transaction, identityId: string): Promise<Mfa> {
    const s = await tx.mfas.findByIdentityForUpdate(identityId);
    if (!s) throw ApiError.notFound();
    return this.open(s);
  }

  /**
   * Marks the session's TOTP done (`api-session.updated`); a legacy session whose TOTP was pending
   * has just become fully authenticated: `api-session.created` too (routers may now admit it).
   */
  private async completeSession(tx: Transaction, apiSessionId: string, identityId: string, maxAgeSeconds?: number): Promise<string | null> {
    const done = await tx.apiSessions.completeMfa(apiSessionId, maxAgeSeconds);
    if (!done) return null;
    await tx.emit({ type: 'api-session.updated', apiSessionId, identityId, tokens: [done.token] });
    if (done.wasPending && done.kind === 'legacy') await tx.emit({ type: 'api-session.created', apiSessionId, identityId });
    return done.token;
  }
}
