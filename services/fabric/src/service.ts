import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { createSchemaPool, schemaMaintenance } from '@ziti/db-kit';
import { createServiceApp } from '@ziti/http-kit';
import { trackRouterMetrics } from '@ziti/metrics';
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
import { LinkTable, linkEventData } from './ctrl/links.js';
import { PeerStates } from './ctrl/router-links.js';
import { RouterMetrics } from './ctrl/router-metrics.js';
import { ConnectedRouters } from './ctrl/topology.js';
import { RouterRelay } from './ctrl/relay.js';
import { ReplicaStore } from './store/replicas.js';
import { LinkStore } from './store/links.js';
import type { PublicKeyEntity, RevocationEntity } from './rdm/model.js';
import { RdmLeader } from './rdm/leader.js';
import { circuitEvent, subscribeEvents } from './events.js';
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
  /** Which of the event stream's `metrics` and `usage` namespaces want routers' metrics (`router.metrics` events). Default neither. */
  routerMetricsEvents?: { metrics: boolean; usage: boolean };
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
  let beatNow: () => Promise<void> = async () => undefined;
  const running = await startContext(SERVICE_NAME, deps, async ({ log, problemLog, onStop }) => {
    const pool = createSchemaPool(deps.databaseUrl, SCHEMA, { max: deps.poolSize ?? 10 }, (err) => log(`${SERVICE_NAME}: idle database connection lost: ${err.message}`));
    onStop(() => pool.end());
    const peers = cachedPeers(grpcPeers(deps));
    onStop(() => peers.close());
    const presence = new PresenceStore(pool, replica);
    const circuitStore = new CircuitStore(pool, replica);
    // Live before anything is written in this replica's name (another replica takes over the rows of replicas it does not see).
    const replicas = new ReplicaStore(pool, replica);
    beatNow = () => replicas.heartbeat(relayAddress);
    await beatNow();
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
    const routerMetrics = new RouterMetrics({ links, events: deps.routerMetricsEvents ?? { metrics: false, usage: false }, publish, log, problem: problemLog });
    links.onGone((l) => routerMetrics.linkGone(l));
    onStop(trackRouterMetrics(() => routerMetrics.all()));
    registry = new RouterRegistry({
      presence,
      peers,
      bus: deps.bus,
      rdm,
      legacy,
      sessions,
      circuits: () => circuits,
      links,
      routerMetrics,
      peerStates: () => peerStates,
      connectedAnywhere: (id) => routers.has(id),
      relay,
      controllerVersion: CONTROLLER_VERSION,
      log,
      problem: problemLog,
    });
    const reg = registry;
    onStop(() => reg.closeAll('controller stopping'));

    const subscriptions = await subscribeEvents(deps.bus, { leader, rdm, registry: reg, circuits, routers, peerStates, links, presence });
    onStop(() => Promise.all(subscriptions.map((sub) => sub.stop())));
    // NATS is back: the changes signalled while it was away reach the subscriptions only once they
    // resume, so the leader reads everything again now and every replica applies what was stored.
    const unwatch = deps.bus.onConnectionChange?.((connected) => {
      if (connected) void leader.refresh().then(() => rdm.catchUp());
    });
    if (unwatch) onStop(unwatch);
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

    // policy reaches one replica; the one holding the router closes its channel.
    const disconnectElsewhere = async (routerId: string, reason: string) => {
      const [state] = await presence.states([routerId]);
      if (!state?.connected) return false;
      publish('router.disconnect-requested', { routerId, reason });
      return true;
    };
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
      grpc: [fabricService(presence, { disconnect: (id, reason) => reg.disconnect(id, reason), disconnectElsewhere }, relay), integrityService({}), maintenanceService(schemaMaintenance({ databaseUrl: deps.databaseUrl, schema: SCHEMA, context: SERVICE_NAME, pool, counts: {} }), log)],
      ready,
    };
  });
  // Where the others relay to this replica: its gRPC listener unless told otherwise (the heartbeat carries it).
  // Said at once, not at the next beat: until then no other replica can relay to this one's routers.
  if (!relayAddress) {
    relayAddress = running.grpcAddress;
    await beatNow().catch(() => undefined);
  }
  return { ...running, ctrlPort, ctrlAddress: `${deps.ctrl.host}:${ctrlPort}` };
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

