import { ApiError } from '@ziti/errors';
import { isStorableText } from '@ziti/http-kit';
import type { Router, Terminator } from './model.js';
import type { NewTerminator, UnitOfWork } from './ports.js';
import { PRECEDENCES } from './service-manager.js';

/** A hosting SDK's bind through a router (OpenZiti CreateTerminatorV2), as the router control plane hands it over. */
export interface EdgeTerminatorInput {
  /** The router-generated terminator id, also its address. */
  id: string;
  serviceId: string;
  routerId: string;
  /** The hosting identity. */
  hostId: string;
  instanceId: string;
  instanceSecret: string;
  cost: number;
  precedence: string;
  /** Decimal key -> base64 value. */
  peerData: Record<string, string>;
}

export interface TerminatorChange {
  cost?: number;
  precedence?: string;
}

const MAX_COST = 65535;
const MAX_ID = 512;
const MAX_PEER_ENTRIES = 64;
const MAX_PEER_VALUE = 16 * 1024;
const DECIMAL_KEY = /^(0|[1-9][0-9]{0,9})$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function text(field: string, value: string, max = MAX_ID): string {
  if (typeof value !== 'string' || value.length > max || !isStorableText(value)) throw ApiError.field(field, `${field} is not a valid text`, value);
  return value;
}

function requiredText(field: string, value: string): string {
  if (!text(field, value)) throw ApiError.field(field, `${field} is required`, value);
  return value;
}

function cost(value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_COST) {
    throw ApiError.field('cost', `invalid cost ${value}. cost must be between 0 and ${MAX_COST} inclusive`, value);
  }
  return value;
}

/** An empty precedence is the default one (proto3's absent string). */
function precedence(value: string): string {
  const p = value || 'default';
  if (!PRECEDENCES.includes(p)) throw ApiError.field('precedence', `precedence should be one of [${PRECEDENCES.join(' ')}]`, value);
  return p;
}

function peerData(value: Record<string, string>): Record<string, string> {
  const entries = Object.entries(value ?? {});
  if (entries.length > MAX_PEER_ENTRIES) throw ApiError.field('peerData', `at most ${MAX_PEER_ENTRIES} entries`, entries.length);
  for (const [k, v] of entries) {
    if (!DECIMAL_KEY.test(k) || Number(k) > 0xffffffff) throw ApiError.field('peerData', 'peer data keys are uint32 in decimal', k);
    if (typeof v !== 'string' || v.length > MAX_PEER_VALUE || v.length % 4 !== 0 || !BASE64.test(v)) throw ApiError.field('peerData', 'peer data values are base64', k);
  }
  return Object.fromEntries(entries);
}

/** The terminator's id is taken by one that is not this bind's (another binding, service, router or host). */
function conflict(existing: Terminator, t: NewTerminator): ApiError | null {
  const differs = (['binding', 'serviceId', 'routerId', 'hostId'] as const).find((k) => existing[k] !== t[k]);
  if (!differs) return null;
  const what = { binding: 'binding', serviceId: 'service', routerId: 'router', hostId: 'identity' }[differs];
  return ApiError.of('ID_CONFLICT', { cause: { code: 'UNHANDLED', message: `selected id conflicts with terminator for different ${what}` } });
}

/**
 * What the router control plane (fabric) asks of routers and terminators: a router's record when it
 * connects, and the edge terminators hosting SDKs create, re-weight and remove through routers.
 * Terminator writes are single statements: they do not change policy evaluation, so they take no
 * evaluation lock.
 */
export class TerminatorManager {
  constructor(private readonly uow: UnitOfWork) {}

  async router(id: string): Promise<Router> {
    const r = id && isStorableText(id) ? await this.uow.repos.routers.find(id) : null;
    if (!r) throw ApiError.notFound(`no router ${id}`);
    return r;
  }

  /** Creates the edge terminator, or updates cost and precedence of the same one (OpenZiti create_terminator_v2.go). */
  async upsertEdge(input: EdgeTerminatorInput): Promise<Terminator> {
    const t: NewTerminator = {
      id: requiredText('id', input.id),
      serviceId: requiredText('serviceId', input.serviceId),
      routerId: requiredText('routerId', input.routerId),
      binding: 'edge',
      address: input.id,
      identity: text('instanceId', input.instanceId),
      cost: cost(input.cost),
      precedence: precedence(input.precedence),
      tags: {},
      hostId: text('hostId', input.hostId),
      peerData: peerData(input.peerData),
      isSystem: true,
      savedPrecedence: null,
      instanceSecret: text('instanceSecret', input.instanceSecret, 4096) || null,
    };
    const repos = this.uow.repos;
    if (!(await repos.services.find(t.serviceId))) throw ApiError.notFound(`no service ${t.serviceId}`);
    await this.router(t.routerId);
    for (let attempt = 0; attempt < 2; attempt++) {
      const existing = await repos.terminators.find(t.id);
      if (existing) {
        const refused = conflict(existing, t);
        if (refused) throw refused;
        if (existing.cost === t.cost && existing.precedence === t.precedence) return existing;
        const updated = await repos.terminators.updateOnRouter(t.id, t.routerId, { cost: t.cost, precedence: t.precedence });
        if (updated) return updated;
        continue; // removed meanwhile: create it
      }
      if (await repos.terminators.insertIfAbsent(t)) {
        const created = await repos.terminators.find(t.id);
        if (created) return created;
      }
      // Created by a concurrent bind (or removed right after): look again.
    }
    throw ApiError.of('ID_CONFLICT', { cause: { code: 'UNHANDLED', message: 'the terminator id changed hands while it was written' } });
  }

  /** Cost/precedence update of a router's terminator (OpenZiti UpdateTerminatorRequest); NOT_FOUND when it is not that router's. */
  async update(id: string, routerId: string, change: TerminatorChange): Promise<Terminator> {
    const c: TerminatorChange = {};
    if (change.cost !== undefined) c.cost = cost(change.cost);
    if (change.precedence !== undefined) c.precedence = precedence(change.precedence);
    const ok = id && routerId && isStorableText(id) && isStorableText(routerId);
    const t = ok ? await this.uow.repos.terminators.updateOnRouter(id, routerId, c) : null;
    if (!t) throw ApiError.notFound(`no terminator ${id} on router ${routerId}`);
    return t;
  }

  /** Removes the router's own terminators: the ids given (others' are ignored), or every edge one of it. */
  async remove(routerId: string, ids: readonly string[], allEdge: boolean): Promise<string[]> {
    const wanted = ids.filter((i) => i && isStorableText(i));
    if (!routerId || !isStorableText(routerId) || (wanted.length === 0 && !allEdge)) return [];
    return this.uow.repos.terminators.removeOnRouter(routerId, wanted, allEdge);
  }

  /** Every terminator of a service (circuit creation picks one); none for an unknown service. */
  async ofService(serviceId: string): Promise<Terminator[]> {
    if (!serviceId || !isStorableText(serviceId)) return [];
    return this.uow.repos.terminators.ofService(serviceId);
  }
}
