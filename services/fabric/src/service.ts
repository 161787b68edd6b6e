import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createSchemaPool, schemaMaintenance } from '@ziti/db-kit';
import { createServiceApp } from '@ziti/http-kit';
import { newChangeEvent } from '@ziti/messaging';
import { type ContextDeps, type RunningContext, integrityService, maintenanceService, startContext } from '@ziti/service-kit';
import { pemCertificates } from '@ziti/x509';
import type { CtrlListenConfig } from './config.js';
import { Circuits } from './ctrl/circuits.js';
import { legacyPush } from './ctrl/edge-sync.js';
import { LegacySessions } from './ctrl/legacy-sessions.js';
import { startCtrlListener } from './ctrl/listener.js';
import { EVENT_SOURCE, RouterRegistry } from './ctrl/registry.js';
import { type CtrlIdentity, ctrlSans, issueCtrlIdentity } from './ctrl/server-identity.js';
import { SessionValidator } from './ctrl/tokens.js';
import { fabricService } from './grpc/fabric.js';
import { type PeerAddresses, grpcPeers, liveRevocations } from './grpc/peers.js';
import { cachedPeers } from './grpc/cached-peers.js';
import { circuitHandlers } from './http/circuits.js';
import { linkHandlers } from './http/links.js';
import { LinkTable, linkEventData, linkOfEvent } from './ctrl/links.js';
import { PeerStates } from './ctrl/router-links.js';
import { ConnectedRouters } from './ctrl/topology.js';
import { RouterRelay } from './ctrl/relay.js';
import { ReplicaStore } from './store/replicas.js';
import { LinkStore } from './store/links.js';
import { type PublicKeyEntity, REVOCATION_CHANGE, type RevocationEntity } from './rdm/model.js';
import { RdmLeader } from './rdm/leader.js';
import { RdmPublisher, type RdmSources } from './rdm/publisher.js';
import { Leadership } from './store/leadership.js';
import { RdmChangeSetStore } from './store/rdm-change-sets.js';
import { SCHEMA, SERVICE_NAME } from './schema.js';
import { PresenceStore } from './store/presence.js';
import { CircuitStore } from './store/circuits.js';
import { RdmStateStore } from './store/rdm-state.js';
import { parseHostPort } from './config.js';

/** The control-plane version routers are told (the OpenZiti contract this context implements). */
export const CONTROLLER_VERSION = 'v2.0.3';
const RESYNC_MS = 60_000;
const CURRENT_INDEX_MS = 30_000;
/** How often a replica looks for change sets whose signal it missed. */
const CATCH_UP_MS = 5_000;
const RENEW_MS = 6 * 3600_000;
/** How often every link is read again (converges link events another replica's change missed). */
const LINK_RELOAD_MS = 30_000;
/** How often a replica says it is live and takes over what gone replicas held. */
const REPLICA_BEAT_MS = 5_000;

export interface ServiceDeps extends ContextDeps, PeerAddresses {
  ctrl: CtrlListenConfig;
  /** The controller id routers see (the same on every replica). Default the host name. */
  replica?: string;
  /**
   * `host:port` other replicas reach this one's gRPC at, to relay routes to the routers it holds
   * (ZITI_FABRIC_RELAY_ADDRESS; in Kubernetes the pod IP and the gRPC port). Default the gRPC
   * listener's own address.
   */
  relayAddress?: string;
  poolSize?: number;
}

export interface RunningService extends RunningContext {
  /** `host:port` the router control listener is bound to. */
  ctrlAddress: string;
  ctrlPort: number;
}

const sha1 = (der: Buffer) => createHash('sha1').update(der).digest('hex');

/**
 * Starts the fabric context: the router control listener and what it serves routers (presence,
 * the router data model, legacy API sessions, terminators, circuits), FabricService for the other
 * contexts, and fabric `/circuits`.
 */
export async function startService(deps: ServiceDeps): Promise<RunningService> {
  let ctrlPort = 0;
  const controllerId = deps.replica || hostname();
  // This process's own id among the replicas (presence rows, circuits, links it holds): new at each start.
  const replica = `${controllerId}-${randomBytes(4).toString('hex')}`;
  let relayAddress = deps.relayAddress ?? '';
  const running = await startContext(SERVICE_NAME, deps, async ({ log, problemLog, onStop }) => {
    const pool = createSchemaPool(deps.databaseUrl, SCHEMA, { max: deps.poolSize ?? 10 }, (err) => log(`${SERVICE_NAME}: idle database connection lost: ${err.message}`));
    onStop(() => pool.end());
    const peers = cachedPeers(grpcPeers(deps));
    onStop(() => peers.close());
    const presence = new PresenceStore(pool, replica);
    const circuitStore = new CircuitStore(pool, replica);
    // Live before anything is written in this replica's name (another replica takes over the rows of replicas it does not see).
    const replicas = new ReplicaStore(pool, replica);
    await replicas.heartbeat(relayAddress);
    onStop(() => replicas.leave().catch((err) => problemLog('fabric: replica row not removed', err)));

    const advertised = deps.ctrl.advertisedAddress ? parseHostPort(deps.ctrl.advertisedAddress, 'ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS').host : undefined;
    let identity: CtrlIdentity = await retry(() => issueCtrlIdentity(peers, ctrlSans(advertised)), log);
    const publicKeys = async (): Promise<PublicKeyEntity[]> => {
      const signing = await peers.getSigningCertificate();
      const signingDer = pemCertificates(signing.certPem)[0];
      const keys: PublicKeyEntity[] = [{ kid: signing.kid || sha1(signingDer), data: signingDer, format: 'x509', usages: ['jwt', 'clientCert'] }];
      for (const ca of [...identity.roots, ...identity.intermediates]) keys.push({ kid: sha1(ca.raw), data: ca.raw, format: 'x509', usages: ['clientCert'] });
      for (const k of await peers.getTokenVerificationKeys()) keys.push({ kid: k.kid, data: Buffer.from(k.publicKeyDer), format: 'pkix', usages: ['jwt'] });
      return keys;
    };
    const revocations = async (ids?: readonly string[]): Promise<RevocationEntity[]> =>
      (await liveRevocations(peers, ids)).map((r) => ({ id: r.id, type: r.type, expiresAtMs: Number(r.expiresAtMs), issuedBeforeMs: Number(r.issuedBeforeMs) }));
    const sources: RdmSources = { policyModel: (only) => peers.getRouterDataModel(only), publicKeys, revocations };
    const rdmState = new RdmStateStore(pool);
    const changeSets = new RdmChangeSetStore(pool);
    const rdm = new RdmPublisher(sources, rdmState, changeSets, problemLog);
    const leader = new RdmLeader({
      sources,
      publisher: rdm,
      state: rdmState,
      changeSets,
      stored: (index) => void deps.bus.publish(newChangeEvent(EVENT_SOURCE, 'rdm.change-set', { index })).catch((err) => problemLog('fabric: change set signal not published', err)),
      problem: problemLog,
    });
    // One replica leads the model (makes its change sets); every replica applies them.
    const leadership = new Leadership(pool, 'ziti.fabric.router-data-model', { lead: () => leader.lead(), lose: () => leader.lose() }, problemLog);
    onStop(() => leadership.stop());

    let registry: RouterRegistry | undefined;
    const edge = () => registry?.edgeChannels() ?? [];
    const legacy = new LegacySessions(
      peers,
      {
        added: (s, full) => edge().forEach((ch) => (full ? legacyPush.fullState(ch, s) : legacyPush.added(ch, s))),
        updated: (s) => edge().forEach((ch) => legacyPush.updated(ch, s)),
        removed: (s) => edge().forEach((ch) => legacyPush.removed(ch, s)),
      },
      problemLog,
    );
    onStop(() => legacy.stop());
    // The model and the legacy sessions load in the background (their sources may start later);
    // the context is ready once the model is loaded, and routers are served from then on.
    const stopping = { stopped: false };
    const loading = (async () => {
      await retry(() => rdm.start(), log, Infinity, stopping);
      if (!stopping.stopped) leadership.start();
      await retry(() => legacy.start(deps.bus), log, Infinity, stopping);
    })().catch((err) => { if (!stopping.stopped) problemLog('fabric: start of the data model failed', err); });
    onStop(async () => {
      stopping.stopped = true;
      await loading;
    });
    const sessions = new SessionValidator(peers, legacy);
    const publish = (type: string, data: Record<string, unknown>) =>
      void deps.bus.publish(newChangeEvent(EVENT_SOURCE, type, { ...data, at: new Date().toISOString() })).catch((err) => problemLog(`fabric: ${type} not published`, err));
    const linkStore = new LinkStore(pool);
    const links = new LinkTable({
      store: linkStore,
      replica,
      publish: (type, l) => publish(`link.${type}`, linkEventData(l)),
      problem: problemLog,
    });
    await links.load();
    const routers = new ConnectedRouters((id) => registry?.routerOf(id));
    const syncRouters = () =>
      presence.connectedRouters().then((rows) =>
        routers.sync(rows, (id) =>
          peers.getRouter(id).then(
            (r) => ({ cost: Number(r.cost) || 0, noTraversal: r.noTraversal }),
            () => ({ cost: 0, noTraversal: false }),
          ),
        ),
      );
    await syncRouters();
    const peerStates = new PeerStates({ presence, held: () => registry?.channels() ?? [], problem: problemLog });
    const relay = new RouterRelay({ channelOf: (id) => registry?.channelOf(id), holderOf: (id) => replicas.holderOf(id), problem: problemLog });
    onStop(() => relay.close());
    const circuits: Circuits = new Circuits({
      peers,
      sessions,
      relay,
      faultElsewhere: (circuitIds) => publish('circuit.faulted', { circuitIds }),
      routerOf: (id) => routers.get(id),
      usableLinks: () => links.usable(),
      encryptionRequired: (serviceId) => rdm.serviceEncryptionRequired(serviceId),
      events: {
        created: (c) => publish('circuit.created', circuitEvent(c)),
        deleted: (c) => publish('circuit.deleted', { ...circuitEvent(c), duration: Date.now() * 1e6 - c.createdAt.getTime() * 1e6 }),
        updated: (c) => publish('circuit.updated', { ...circuitEvent(c), duration: Date.now() * 1e6 - c.createdAt.getTime() * 1e6 }),
        failed: (f) => publish('circuit.failed', { ...f, path: f.path ? { nodes: f.path, links: [] } : undefined }),
      },
      store: circuitStore,
      problem: problemLog,
    });
    links.onGone((l) => circuits.linkGone(l.id));
    registry = new RouterRegistry({
      presence,
      peers,
      bus: deps.bus,
      rdm,
      legacy,
      sessions,
      circuits: () => circuits,
      links,
      peerStates: () => peerStates,
      connectedAnywhere: (id) => routers.has(id),
      relay,
      controllerVersion: CONTROLLER_VERSION,
      log,
      problem: problemLog,
    });
    const reg = registry;
    onStop(() => reg.closeAll('controller stopping'));

    const changes = await deps.bus.subscribeBroadcast('policy', ['router-data-model.changed'], async (e) => {
      const list = (e.data as { changes?: unknown }).changes;
      const named = Array.isArray(list) ? list.filter((c): c is { kind: string; id: string } => typeof c?.kind === 'string' && typeof c?.id === 'string') : [];
      void (named.length > 0 ? leader.changed(named) : leader.refresh());
    });
    onStop(() => changes.stop());
    // A new revocation (OIDC logout, refresh rotation, identity disabled, POST /revocations) reaches routers as a change.
    const revoked = await deps.bus.subscribeBroadcast('identity-auth', ['revocation.created'], async (e) => {
      const id = (e.data as { revocationId?: unknown }).revocationId;
      if (typeof id === 'string' && id.length > 0) void leader.changed([{ kind: REVOCATION_CHANGE, id }]);
    });
    onStop(() => revoked.stop());
    // The leader stored a change set: every replica applies it and sends it to its routers.
    const stored = await deps.bus.subscribeBroadcast('fabric', ['rdm.change-set'], async () => void rdm.catchUp());
    onStop(() => stored.stop());
    // NATS is back: the changes signalled while it was away reach the subscriptions only once they
    // resume, so the leader reads everything again now and every replica applies what was stored.
    const unwatch = deps.bus.onConnectionChange?.((connected) => {
      if (connected) void leader.refresh().then(() => rdm.catchUp());
    });
    if (unwatch) onStop(unwatch);
    // Every replica's routers and links: peers learn of each other, paths see every router and link.
    const topology = await deps.bus.subscribeBroadcast('fabric', ['router.connected', 'router.disconnected', 'link.routerLinkNew', 'link.fault', 'link.duplicate', 'circuit.faulted'], async (e) => {
      const d = e.data as Record<string, unknown>;
      if (e.type === 'circuit.faulted') {
        // A router held elsewhere faulted circuits: the replica owning them ends them.
        for (const id of Array.isArray(d.circuitIds) ? d.circuitIds.slice(0, 10_000) : []) if (typeof id === 'string') circuits.remove(id);
        return;
      }
      const routerId = typeof d.routerId === 'string' ? d.routerId : '';
      const connectionId = typeof d.connectionId === 'string' ? d.connectionId : '';
      if (e.type === 'router.connected' && routerId) {
        routers.connected(routerId, connectionId, { cost: Number(d.cost) || 0, noTraversal: d.noTraversal === true });
        const version = (d.versionInfo as { version?: unknown } | undefined)?.version;
        peerStates.connected(routerId, typeof version === 'string' ? version : '', Array.isArray(d.linkListeners) ? (d.linkListeners as import('@ziti/channel').ctrlPb.Listener[]) : []);
      } else if (e.type === 'router.disconnected' && routerId) {
        routers.disconnected(routerId, connectionId);
        if (!reg.channelOf(routerId) && !(await presence.heldElsewhere(routerId, connectionId))) peerStates.disconnected(routerId);
      } else if (e.type.startsWith('link.')) {
        const l = linkOfEvent(d);
        if (l) links.applyRemote(e.type.slice('link.'.length), l);
      }
    });
    onStop(() => topology.stop());
    const deleted = await deps.bus.subscribeBroadcast('policy', ['router.deleted'], async (e) => {
      const id = (e.data as { routerId?: unknown }).routerId;
      if (typeof id === 'string' && id) {
        peerStates.disconnected(id, true);
        circuits.routerDeleted(id);
      }
    });
    onStop(() => deleted.stop());
    const timers = [
      setInterval(
        () =>
          void leader
            .refresh()
            .then(() => rdm.refreshKeys())
            .then(() => legacy.reload())
            .catch((err) => problemLog('fabric: periodic resync failed', err)),
        RESYNC_MS,
      ),
      setInterval(() => rdm.tick(), CURRENT_INDEX_MS),
      setInterval(() => void rdm.catchUp(), CATCH_UP_MS),
      setInterval(
        () =>
          void replicas
            .heartbeat(relayAddress)
            .then(() => replicas.takeOver())
            .then(async ({ circuitIds, routerIds }) => {
              if (circuitIds.length > 0) log(`fabric: took over ${circuitIds.length} circuit(s) of a replica that is gone`);
              await circuits.adopt(circuitIds);
              for (const routerId of routerIds) publish('router.disconnected', { routerId, at: new Date().toISOString(), reason: 'its control plane replica is gone', connectionId: '' });
            })
            .catch((err) => problemLog('fabric: replica heartbeat failed', err)),
        REPLICA_BEAT_MS,
      ),
      setInterval(() => void Promise.all([links.load(), syncRouters()]).catch((err) => problemLog('fabric: links and routers not read again', err)), LINK_RELOAD_MS),
    ];
    const listener = await startCtrlListener(deps.ctrl.host, deps.ctrl.port, {
      peers,
      registry: reg,
      identity: () => identity,
      controllerId,
      controllerVersion: `${CONTROLLER_VERSION}|ziti-controller|${new Date().toISOString().slice(0, 19).replace('T', ' ')}|${process.platform}|${process.arch}`,
      log,
      problem: problemLog,
    });
    timers.push(
      setInterval(() => {
        issueCtrlIdentity(peers, ctrlSans(advertised))
          .then((fresh) => {
            identity = fresh;
            listener.renew();
          })
          .catch((err) => problemLog('fabric: control listener certificate not renewed', err));
      }, RENEW_MS),
    );
    for (const t of timers) t.unref();
    onStop(() => timers.forEach((t) => clearInterval(t)));
    onStop(() => listener.close());
    ctrlPort = listener.port;
    log(`${SERVICE_NAME}: router control listener tls:${deps.ctrl.host}:${listener.port}`);

    const routerNames = async (ids: string[]) => {
      const names = new Map<string, string>();
      await Promise.all(
        ids.map(async (id) => {
          const local = reg.routerOf(id);
          names.set(id, local?.name ?? (await peers.getRouter(id).then((r) => r.name, () => id)));
        }),
      );
      return names;
    };
    const ready = async () => (await pool.query('SELECT 1')).rowCount === 1 && rdm.ready;
    return {
      app: createServiceApp({ owner: SERVICE_NAME, internalSecret: deps.internalSecret, handlers: { ...circuitHandlers(circuitStore, routerNames, (id) => rdm.serviceName(id)), ...linkHandlers(linkStore, routerNames) }, ready }),
      // IntegrityService like every context (it holds no references the check covers yet: every method answers UNIMPLEMENTED to the gateway).
      grpc: [fabricService(presence, reg, relay), integrityService({}), maintenanceService(schemaMaintenance({ databaseUrl: deps.databaseUrl, schema: SCHEMA, context: SERVICE_NAME, pool, counts: {} }), log)],
      ready,
    };
  });
  // Where the others relay to this replica: its gRPC listener unless told otherwise (the heartbeat carries it).
  if (!relayAddress) relayAddress = running.grpcAddress;
  return { ...running, ctrlPort, ctrlAddress: `${deps.ctrl.host}:${ctrlPort}` };
}

function circuitEvent(c: import('./ctrl/circuits.js').Circuit) {
  return {
    circuitId: c.id,
    clientId: c.clientId,
    serviceId: c.serviceId,
    terminatorId: c.terminatorId,
    instanceId: c.instanceId,
    creationTimespanNs: c.creationTimespanNs,
    path: { nodes: c.path, links: c.links, ingressId: c.ingressId, egressId: c.egressId },
    tags: c.tags,
  };
}

/** Retries a start step until the context it needs answers (at most a minute), one line per failure. */
async function retry<T>(fn: () => Promise<T>, log: (m: string) => void, forMs = 60_000, stop?: { stopped: boolean }): Promise<T> {
  const until = Date.now() + forMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > until || stop?.stopped) throw err;
      log(`${SERVICE_NAME}: start waits for its peers (${(err as Error).message}); retrying`);
      await new Promise((r) => setTimeout(r, Math.min(2000, 200 * attempt)));
    }
  }
}

