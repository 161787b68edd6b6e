import type { UpdbAuthenticator } from '../domain/model.js';
import type { AuthenticatorRepository } from '../domain/ports.js';
import { type Db, mapped } from './db.js';

export class PrismaAuthenticatorRepository implements AuthenticatorRepository {
  constructor(private readonly db: Db) {}

  async findUpdbByUsername(username: string): Promise<UpdbAuthenticator | null> {
    const r = await this.db.authenticator.findUnique({ where: { username } });
    if (!r || r.method !== 'updb' || r.password === null || r.salt === null) return null;
    return { id: r.id, identityId: r.identityId, username, password: r.password, salt: r.salt, failedAttempts: r.failedAttempts };
  }

  async createUpdb(a: { id: string; identityId: string; username: string; password: string; salt: string }): Promise<void> {
    await mapped(() => this.db.authenticator.create({ data: { ...a, method: 'updb' } }), () => a.username);
  }

  async setFailedAttempts(id: string, count: number): Promise<void> {
    await this.db.authenticator.update({ where: { id }, data: { failedAttempts: count } });
  }
}
