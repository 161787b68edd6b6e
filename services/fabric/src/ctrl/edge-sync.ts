import { edgeCtrlPb, encodeBool, encodeString, encodeUint64 } from '@ziti/channel';

const { ApiSessionAdded, ApiSessionRemoved, ApiSessionUpdated, ApiSessionHeartbeat, ClientHello, ServerHello, SubscribeToDataModelRequest } = edgeCtrlPb;

import type { LegacyApiSession } from '@ziti/proto';
import { randomUUID } from 'node:crypto';
import { encodeChangeSet, encodeDataState } from '../rdm/wire.js';
import type { ChangeSet, RdmPublisher, RdmSink } from '../rdm/publisher.js';
import type { ModelEntity } from '../rdm/model.js';
import { CT, H, SYNC } from './ids.js';
import type { Message, RouterChannel } from './port.js';

const CLIENT_HELLO_TIMEOUT_MS = 30_000;
/** Legacy API sessions per ApiSessionAdded message of a full state (OpenZiti's chunk size). */
const CHUNK = 100;

/** `protocol -> protocol://host:port` of a ClientHello's edge listeners (OpenZiti `ReceiveClientHello`). */
export function supportedProtocolsOf(hello: edgeCtrlPb.ClientHello): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of hello.listeners) {
    const a = l.advertise;
    if (!a || !a.protocol || !a.hostname || !a.port) continue;
    out[a.protocol] = `${a.protocol}://${a.hostname}:${a.port}`;
  }
  if (Object.keys(out).length === 0) {
    // Older routers: `protocols` with the parallel `protocolPorts`.
    hello.protocols.forEach((p, i) => {
      const port = hello.protocolPorts[i];
      if (p && port && hello.hostname) out[p] = `${p}://${hello.hostname}:${port}`;
    });
  }
  return out;
}

/** The router data model sent on one router's channel. */
export function rdmSink(ch: RouterChannel): RdmSink {
  const sub = (id: string | undefined) => (id ? new Map([[H.RouterDataModelSubscriptionId, encodeString(id)]]) : undefined);
  return {
    fullState: (entities: ModelEntity[], endIndex: number, timelineId: string, subscriptionId: string) => {
      ch.send(CT.DataState, encodeDataState(entities, endIndex, timelineId), sub(subscriptionId));
    },
    changeSet: (set: ChangeSet, subscriptionId: string | undefined) => {
      ch.send(CT.DataStateChangeSet, encodeChangeSet(set), sub(subscriptionId));
    },
    currentIndex: (index: number) => {
      ch.send(CT.CurrentIndex, undefined, new Map([[H.RouterDataModelIndex, encodeUint64(BigInt(index))]]));
    },
  };
}

const apiSessionMsg = (s: LegacyApiSession) => ({ token: s.token, certFingerprints: s.certFingerprints, id: s.id, identityId: s.identityId });

/** Legacy API-session pushes on one router's channel. */
export const legacyPush = {
  fullState(ch: RouterChannel, sessions: LegacyApiSession[]): void {
    const syncId = randomUUID();
    const chunks = Math.max(1, Math.ceil(sessions.length / CHUNK));
    for (let i = 0; i < chunks; i++) {
      const part = sessions.slice(i * CHUNK, (i + 1) * CHUNK);
      const state = JSON.stringify({ id: syncId, isLast: i === chunks - 1, sequence: i });
      ch.send(CT.ApiSessionAdded, ApiSessionAdded.encode({ isFullState: true, apiSessions: part.map(apiSessionMsg) }).finish(), new Map([
        [H.SyncStrategy, encodeString('instant')],
        [H.SyncState, encodeString(state)],
      ]));
    }
  },
  added(ch: RouterChannel, sessions: LegacyApiSession[]): void {
    ch.send(CT.ApiSessionAdded, ApiSessionAdded.encode({ isFullState: false, apiSessions: sessions.map(apiSessionMsg) }).finish(), new Map([[H.SyncStrategy, encodeString('instant')]]));
  },
  updated(ch: RouterChannel, sessions: LegacyApiSession[]): void {
    ch.send(CT.ApiSessionUpdated, ApiSessionUpdated.encode({ apiSessions: sessions.map(apiSessionMsg) }).finish(), new Map([[H.SyncStrategy, encodeString('instant')]]));
  },
  removed(ch: RouterChannel, sessions: { id: string; token: string }[]): void {
    ch.send(CT.ApiSessionRemoved, ApiSessionRemoved.encode({ tokens: sessions.map((s) => s.token), ids: sessions.map((s) => s.id) }).finish());
  },
};

export interface EdgeSyncDeps {
  controllerVersion: string;
  rdm: RdmPublisher;
  legacySessions(): LegacyApiSession[];
  status(fields: { syncStatus: string; hostname?: string; supportedProtocols?: Record<string, string> }): Promise<void>;
  touch(tokens: string[]): Promise<{ unknownTokens: string[] }>;
  problem(m: string, err?: unknown): void;
}

/**
 * An edge router's handlers (registered at once, before anything is awaited: a router sends its
 * data-model subscription right after the hello, and a message without a handler is dropped):
 * its data-model subscriptions, API-session heartbeats and resync requests.
 */
export function edgeSyncHandlers(ch: RouterChannel, routerId: string, deps: EdgeSyncDeps): void {
  const sink = rdmSink(ch);
  ch.handle(CT.SubscribeToDataModel, (m: Message) => {
    const req = SubscribeToDataModelRequest.decode(m.body);
    deps.rdm.subscribe(routerId, sink, {
      currentIndex: Number(req.currentIndex),
      durationSeconds: req.subscriptionDurationSeconds,
      timelineId: req.timelineId,
      subscriptionId: req.subscriptionId,
    });
  });
  ch.handle(CT.ApiSessionHeartbeat, async (m: Message) => {
    const tokens = ApiSessionHeartbeat.decode(m.body).tokens.filter((t) => t.length > 0 && t.length <= 512).slice(0, 10_000);
    if (tokens.length === 0) return;
    const { unknownTokens } = await deps.touch(tokens);
    if (unknownTokens.length > 0) ch.send(CT.ApiSessionRemoved, ApiSessionRemoved.encode({ tokens: unknownTokens, ids: [] }).finish());
  });
  ch.handle(CT.RequestClientReSync, () => {
    legacyPush.fullState(ch, deps.legacySessions());
    sink.changeSet(deps.rdm.keysChangeSet(), undefined);
  });
  ch.onClose(() => deps.rdm.unsubscribe(routerId, sink));
}

/**
 * An edge router's synchronisation (OpenZiti `sync_instant.go`): ServerHello, the router's
 * ClientHello (hostname, edge listeners), the legacy API sessions and the public keys, then
 * SYNC_DONE.
 */
export async function syncEdgeRouter(ch: RouterChannel, routerId: string, deps: EdgeSyncDeps): Promise<boolean> {
  await deps.status({ syncStatus: SYNC.HELLO });
  const body = ServerHello.encode({ version: deps.controllerVersion, data: { instant: 'true', routerModel: 'true' }, byteData: {} }).finish();
  let reply: Message;
  try {
    reply = await ch.request(CT.ServerHello, body, new Map([[H.RouterDataModel, encodeBool(true)]]), CLIENT_HELLO_TIMEOUT_MS);
  } catch (err) {
    await deps.status({ syncStatus: SYNC.HELLO_TIMEOUT });
    deps.problem(`fabric: router ${routerId} did not answer the server hello`, err);
    return false;
  }
  if (reply.contentType !== CT.ClientHello) {
    await deps.status({ syncStatus: SYNC.ERROR });
    return false;
  }
  const hello = ClientHello.decode(reply.body);
  await deps.status({ syncStatus: SYNC.IN_PROGRESS, hostname: hello.hostname.slice(0, 255), supportedProtocols: supportedProtocolsOf(hello) });
  const sessions = deps.legacySessions();
  if (sessions.length > 0) legacyPush.fullState(ch, sessions);
  rdmSink(ch).changeSet(deps.rdm.keysChangeSet(), undefined);
  await deps.status({ syncStatus: SYNC.DONE });
  return true;
}
