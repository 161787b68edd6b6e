// The Kubernetes manifests cannot be applied here (no cluster, no container engine), so this
// checks what can be checked offline: every file parses, the kustomization lists them all, the
// references between objects (selectors, named ports, ConfigMaps, Secrets and certificates, HPA
// targets, the entry points the commands run) hold, each pod gets only the secrets it uses, and
// the NetworkPolicies admit each port only from the processes that call it (INTERNAL_RPC_CALLERS).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTEXT_NAMES, INTERNAL_RPC_CALLERS, INTERNAL_SERVICE_OWNERS } from '@ziti/service-kit';
import { loadAll } from 'js-yaml';

const ROOT = join(__dirname, '..', '..', '..');
const K8S = join(ROOT, 'deploy', 'k8s');
const CONTEXTS = ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric'];
const PROCESSES = ['gateway', ...CONTEXTS];
/**
 * Contexts whose source is not in this tree yet (a context is deployed before it is merged): their
 * manifests are checked, the entry points and configuration they name are checked once the
 * source is here.
 */
const PENDING = CONTEXTS.filter((c) => !existsSync(join(ROOT, 'services', c, 'src')));
const TLS_DIR = '/etc/ziti/internal-tls';

type Obj = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any; data?: any; stringData?: any };

function load(file: string): Obj[] {
  return (loadAll(readFileSync(join(K8S, file), 'utf8')) as (Obj | null)[]).filter((d): d is Obj => d !== null);
}

const kustomization = load('kustomization.yaml')[0] as unknown as { namespace: string; resources: string[] };
const objects = kustomization.resources.flatMap(load);
const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
const named = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

/** Asserts the source of `node services/x/dist/main.js` (`services/x/src/main.ts`) exists. */
function expectEntry(command: string[]): void {
  expect(command[0]).toBe('node');
  expect(command[1]).toMatch(/^services\/[a-z-]+\/dist\/[a-z-]+\.js$/);
  const source = command[1].replace('/dist/', '/src/').replace(/\.js$/, '.ts');
  if (PENDING.includes(command[1].split('/')[1]!)) return;
  expect(existsSync(join(ROOT, source)) ? 'present' : `missing ${source}`).toBe('present');
}

/** The secret keys each workload reads (its env name is the key's name); nothing else. */
const SECRET_KEYS: Record<string, string[]> = {
  gateway: ['ZITI_INTERNAL_SECRET', 'ZITI_SERVER_KEY_SECRET', 'NATS_URL', 'REDIS_URL'],
  'identity-auth': ['ZITI_INTERNAL_SECRET', 'ZITI_MFA_SECRET', 'ZITI_PWD', 'DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  'pki-enrollment': ['ZITI_INTERNAL_SECRET', 'ZITI_PKI_KEY', 'ZITI_SERVER_KEY_SECRET', 'DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  policy: ['ZITI_INTERNAL_SECRET', 'DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  session: ['ZITI_INTERNAL_SECRET', 'DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  posture: ['ZITI_INTERNAL_SECRET', 'DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  fabric: ['ZITI_INTERNAL_SECRET', 'DATABASE_URL', 'NATS_URL', 'REDIS_URL'],
  ...Object.fromEntries(CONTEXTS.map((c) => [`migrate-${c}`, ['DATABASE_URL']])),
};

/**
 * Who calls each context's gRPC port: the callers `INTERNAL_RPC_CALLERS` names for the methods of
 * the services it owns, and of the services every context serves (health, maintenance,
 * integrity). Checked against the NetworkPolicies and the services' configuration below.
 */
const GRPC_CALLERS: Record<string, string[]> = (() => {
  const callers: Record<string, Set<string>> = Object.fromEntries(CONTEXTS.map((c) => [c, new Set<string>()]));
  for (const [path, who] of Object.entries(INTERNAL_RPC_CALLERS)) {
    const owner = INTERNAL_SERVICE_OWNERS[path.split('/')[1]!];
    for (const c of owner ? [owner] : CONTEXTS) for (const caller of who) callers[c]!.add(caller);
  }
  return Object.fromEntries(Object.entries(callers).map(([c, set]) => [c, [...set].sort()]));
})();

/** Deployments and Jobs by name, with their pod templates. */
const workloads = () => [...byKind('Deployment'), ...byKind('Job')].map((w) => ({ name: w.metadata.name, pod: w.spec.template }));
const allContainers = (pod: any): any[] => [...(pod.spec.initContainers ?? []), ...pod.spec.containers];

/** Every secretKeyRef of a pod: env name → Secret and key. */
function secretRefs(pod: any): Record<string, { name: string; key: string }> {
  const refs: Record<string, { name: string; key: string }> = {};
  for (const c of allContainers(pod)) {
    for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef) refs[e.name] = e.valueFrom.secretKeyRef;
  }
  return refs;
}

/** The Secrets a pod mounts as files. */
const secretVolumes = (pod: any): string[] =>
  (pod.spec.volumes ?? []).flatMap((v: any) => [
    ...(v.secret ? [v.secret.secretName] : []),
    ...(v.projected?.sources ?? []).filter((s: any) => s.secret).map((s: any) => s.secret.name),
  ]);

const NAME = 'app.kubernetes.io/name';
const selects = (selector: any, labels: Record<string, string>): boolean => {
  if (selector.matchExpressions) throw new Error('matchExpressions: not handled by this check');
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
};

/** One `from` peer as `pod:<name>` or `namespace:<name>`; other shapes are refused, not guessed. */
function peer(p: any): string {
  const keys = Object.keys(p);
  const labels = (sel: any) => (sel.matchExpressions ? undefined : JSON.stringify(sel.matchLabels ?? {}));
  if (keys.length === 1 && keys[0] === 'podSelector' && labels(p.podSelector) === JSON.stringify({ [NAME]: p.podSelector.matchLabels?.[NAME] })) {
    return `pod:${p.podSelector.matchLabels[NAME]}`;
  }
  const ns = 'kubernetes.io/metadata.name';
  if (keys.length === 1 && keys[0] === 'namespaceSelector' && labels(p.namespaceSelector) === JSON.stringify({ [ns]: p.namespaceSelector.matchLabels?.[ns] })) {
    return `namespace:${p.namespaceSelector.matchLabels[ns]}`;
  }
  throw new Error(`peer not handled by this check: ${JSON.stringify(p)}`);
}

/** Who the NetworkPolicies admit to a container port of pods with these labels (`anywhere`, `pod:x`, `namespace:y`). */
function admitted(labels: Record<string, string>, port: { name: string; containerPort: number }): string[] {
  const from = new Set<string>();
  for (const np of byKind('NetworkPolicy')) {
    if (!np.spec.policyTypes?.includes('Ingress') || !selects(np.spec.podSelector, labels)) continue;
    for (const rule of np.spec.ingress ?? []) {
      const ports = rule.ports as { port?: number | string; protocol?: string }[] | undefined;
      const matches = !ports || ports.some((p) => (p.protocol ?? 'TCP') === 'TCP' && (p.port === undefined || p.port === port.containerPort || p.port === port.name));
      if (!matches) continue;
      if (!rule.from?.length) from.add('anywhere');
      for (const p of rule.from ?? []) from.add(peer(p));
    }
  }
  return [...from].sort();
}

describe('deploy/k8s manifests', () => {
  it('lists every manifest in the kustomization, and each object is well-formed', () => {
    const files = readdirSync(K8S).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    for (const o of objects) expect(o).toEqual(expect.objectContaining({ apiVersion: expect.any(String), kind: expect.any(String) }));
    for (const o of objects) expect(o.metadata.name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  it('runs every context and the gateway as a two-replica Deployment with probes on named ports', () => {
    expect(byKind('Deployment').map((d) => d.metadata.name).sort()).toEqual([...CONTEXTS, 'gateway'].sort());
    for (const d of byKind('Deployment')) {
      const pod = d.spec.template;
      expect(d.spec.replicas).toBe(2);
      expect(pod.metadata.labels).toEqual(expect.objectContaining(d.spec.selector.matchLabels));
      expect(pod.spec.securityContext.runAsNonRoot).toBe(true);
      for (const c of pod.spec.containers) {
        expectEntry(c.command);
        const ports = c.ports.map((p: { name: string }) => p.name);
        for (const probe of [c.readinessProbe, c.livenessProbe]) {
          expect(ports).toContain((probe.httpGet ?? probe.tcpSocket).port);
          // Every listener is TLS (the contexts' mutual TLS answers a probe without a certificate).
          if (probe.httpGet) expect(probe.httpGet.scheme).toBe('HTTPS');
        }
        expect(c.resources.requests).toBeDefined();
        for (const ref of c.envFrom ?? []) expect(named('ConfigMap', ref.configMapRef?.name)).toBeDefined();
      }
    }
    // The gateway reaches the contexts over HTTPS only (it refuses an http:// upstream at start).
    const config = named('ConfigMap', 'ziti-config')!.data;
    for (const key of Object.keys(config).filter((k) => k.endsWith('_URL'))) expect({ key, url: config[key] }).toEqual({ key, url: expect.stringMatching(/^https:\/\//) });
    const gw = named('Deployment', 'gateway')!.spec.template.spec;
    expect(gw.containers[0].readinessProbe.httpGet).toEqual(expect.objectContaining({ scheme: 'HTTPS', path: '/ziti-internal/readyz' }));
    // Snapshots land on a claimed volume mounted where ZITI_SNAPSHOT_DIR points, not in the pod.
    const snapshotDir = named('ConfigMap', 'ziti-config')!.data.ZITI_SNAPSHOT_DIR;
    const mount = gw.containers[0].volumeMounts.find((m: any) => m.mountPath === snapshotDir);
    expect(mount).toBeDefined();
    const claim = gw.volumes.find((v: any) => v.name === mount.name)?.persistentVolumeClaim?.claimName;
    expect(named('PersistentVolumeClaim', claim)).toBeDefined();
  });

  it('has every pod scraped by Prometheus on a metrics port of its own, the one ZITI_METRICS_PORT sets', () => {
    const port = named('ConfigMap', 'ziti-config')!.data.ZITI_METRICS_PORT;
    expect(port).toBe('9100');
    // Every pod interface: the NetworkPolicies decide who reaches it (below).
    expect(named('ConfigMap', 'ziti-config')!.data.ZITI_METRICS_HOST).toBe('0.0.0.0');
    for (const d of byKind('Deployment')) {
      const pod = d.spec.template;
      expect({ name: d.metadata.name, annotations: pod.metadata.annotations }).toEqual({
        name: d.metadata.name,
        annotations: expect.objectContaining({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': port, 'prometheus.io/path': '/metrics' }),
      });
      const ports = pod.spec.containers[0].ports as { name: string; containerPort: number }[];
      expect(ports.find((p) => p.name === 'metrics')?.containerPort).toBe(Number(port));
      // Not one of the ports the API, the probes or gRPC are served on.
      expect(ports.filter((p) => p.containerPort === Number(port))).toHaveLength(1);
      // The context does not override the shared setting with a port of its own.
      const own = `${d.metadata.name.toUpperCase().replace(/-/g, '_')}_METRICS_PORT`;
      expect(named('ConfigMap', 'ziti-config')!.data[own]).toBeUndefined();
      expect((pod.spec.containers[0].env ?? []).map((e: { name: string }) => e.name)).not.toContain(own);
    }
  });

  it('gives every Deployment a Service that selects its pods and targets its ports; the gateway is a LoadBalancer on 1280', () => {
    for (const d of byKind('Deployment')) expect(named('Service', d.metadata.name)?.spec.selector).toEqual(d.spec.selector.matchLabels);
    for (const s of byKind('Service')) {
      const d = named('Deployment', s.spec.selector[NAME])!;
      expect(d.spec.template.metadata.labels).toEqual(expect.objectContaining(s.spec.selector));
      const ports = d.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name);
      for (const p of s.spec.ports) expect(ports).toContain(p.targetPort);
    }
    expect(named('Service', 'gateway')!.spec).toEqual(expect.objectContaining({ type: 'LoadBalancer', ports: [expect.objectContaining({ port: 1280 })] }));
  });

  it('exposes the router control listener (6262) as a plain TCP Service that passes TLS through', () => {
    const fabric = named('Deployment', 'fabric')!.spec.template.spec.containers[0];
    const env = Object.fromEntries((fabric.env as { name: string; value?: string }[]).filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
    const ctrlPort = fabric.ports.find((p: { name: string }) => p.name === 'ctrl');
    expect(ctrlPort).toEqual({ name: 'ctrl', containerPort: 6262 });
    expect(env.ZITI_ROUTER_CTRL_LISTEN).toBe(`0.0.0.0:${ctrlPort.containerPort}`);
    // The HTTP and gRPC ports it is told to use are the ones the pod and its Service declare.
    const port = (name: string) => fabric.ports.find((p: { name: string }) => p.name === name).containerPort;
    expect([Number(env.ZITI_FABRIC_HTTP_PORT), Number(env.ZITI_FABRIC_GRPC_PORT)]).toEqual([port('http'), port('grpc')]);

    const services = byKind('Service').filter((s) => s.spec.ports.some((p: any) => p.targetPort === 'ctrl' || p.targetPort === ctrlPort.containerPort));
    expect(services.map((s) => s.metadata.name)).toEqual(['fabric-ctrl']);
    const [svc] = services;
    expect(['LoadBalancer', 'NodePort']).toContain(svc!.spec.type);
    expect(svc!.spec.selector).toEqual(named('Deployment', 'fabric')!.spec.selector.matchLabels);
    expect(svc!.spec.ports).toEqual([{ name: 'ctrl', protocol: 'TCP', port: 6262, targetPort: 'ctrl' }]);
    // Nothing in front of it terminates TLS: no L7 protocol, no load balancer TLS or certificate annotation, no Ingress.
    expect(svc!.spec.ports[0].appProtocol).toBeUndefined();
    expect(Object.keys((svc as any).metadata.annotations ?? {}).filter((k) => /ssl|tls|cert|backend-protocol/i.test(k))).toEqual([]);
    expect(byKind('Ingress')).toEqual([]);
    // The only public listener besides the gateway's.
    expect(byKind('Service').filter((s) => s.spec.type === 'LoadBalancer' || s.spec.type === 'NodePort').map((s) => s.metadata.name).sort()).toEqual(['fabric-ctrl', 'gateway']);

    // Routers dial the advertised address (the listener's certificate names it), which their
    // enrollment JWTs carry (ZITI_CTRL_ENDPOINTS, pki-enrollment), on the Service's port; the
    // shared ZITI_CTRL_ADVERTISED_ADDRESS is the edge API's.
    const config = named('ConfigMap', 'ziti-config')!.data;
    expect(env.ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS).toMatch(/^[a-z0-9.-]+:\d+$/);
    expect(env.ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS.split(':')[1]).toBe(String(svc!.spec.ports[0].port));
    expect(config.ZITI_CTRL_ENDPOINTS).toBe(`tls:${env.ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS}`);
    expect(config.ZITI_CTRL_ADVERTISED_ADDRESS).not.toBe(env.ZITI_ROUTER_CTRL_ADVERTISED_ADDRESS);
  });

  it("names every context's HTTP and gRPC address for the gateway and its peers, at its Service's ports", () => {
    const config = named('ConfigMap', 'ziti-config')!.data;
    for (const c of CONTEXTS) {
      const key = c.toUpperCase().replace(/-/g, '_');
      const ports = Object.fromEntries(named('Service', c)!.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port]));
      expect({ c, url: config[`${key}_URL`], grpc: config[`${key}_GRPC`] }).toEqual({ c, url: `https://${c}:${ports.http}`, grpc: `${c}:${ports.grpc}` });
    }
  });

  it('has a migration Job per context and autoscalers for gateway, identity-auth and session', () => {
    const jobs = byKind('Job');
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual(CONTEXTS.map((c) => `migrate-${c}`).sort());
    for (const j of jobs) {
      const [c] = j.spec.template.spec.containers;
      expectEntry(c.command);
      expect(c.command[1]).toMatch(/\/dist\/migrate\.js$/);
    }
    const hpas = byKind('HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.spec.scaleTargetRef.name).sort()).toEqual(['gateway', 'identity-auth', 'session']);
    for (const h of hpas) expect(named('Deployment', h.spec.scaleTargetRef.name)).toBeDefined();
  });

  it('keeps only strings in ConfigMaps', () => {
    for (const o of byKind('ConfigMap')) {
      for (const v of Object.values({ ...o.data })) expect(typeof v).toBe('string');
    }
  });

  it('gives the gateway and identity-auth one controller id (ZITI_INSTANCE_ID), the same on every replica', () => {
    const config = named('ConfigMap', 'ziti-config')!;
    expect(config.data.ZITI_INSTANCE_ID).toMatch(/\S/);
    for (const name of ['gateway', 'identity-auth']) {
      const refs = named('Deployment', name)!.spec.template.spec.containers[0].envFrom ?? [];
      expect(refs.map((r: { configMapRef?: { name: string } }) => r.configMapRef?.name)).toContain('ziti-config');
    }
  });
  it('stops every pod after its load balancer has let go: preStop sleep, then a drain shorter than the grace period', () => {
    const grace = Number(named('ConfigMap', 'ziti-config')!.data.ZITI_SHUTDOWN_GRACE_SECONDS);
    expect(grace).toBeGreaterThan(0);
    for (const d of byKind('Deployment')) {
      const pod = d.spec.template.spec;
      const preStop = pod.containers[0].lifecycle?.preStop?.sleep?.seconds;
      expect({ name: d.metadata.name, preStop: typeof preStop }).toEqual({ name: d.metadata.name, preStop: 'number' });
      // SIGTERM comes after the preStop hook, and both count against terminationGracePeriodSeconds.
      expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(preStop + grace);
    }
  });

  it('serves the console from a volume an init container fills, mounted where ZITI_ZAC_DIR of the gateway points', () => {
    const gw = named('Deployment', 'gateway')!.spec.template.spec;
    const dir = gw.containers[0].env.find((e: { name: string }) => e.name === 'ZITI_ZAC_DIR')?.value;
    const mount = gw.containers[0].volumeMounts.find((m: any) => m.mountPath === dir);
    expect(mount).toEqual(expect.objectContaining({ readOnly: true }));
    const init = gw.initContainers.find((c: any) => c.volumeMounts.some((m: any) => m.name === mount.name));
    expect(init.command.join(' ')).toContain('ziti-console.zip');
    // A failed download must not keep the gateway from starting: the script ends in a fallback.
    expect(init.command.join(' ')).toMatch(/\|\| echo /);
    expect(gw.volumes.find((v: any) => v.name === mount.name)?.emptyDir).toBeDefined();
  });

  it('holds no secret: no Secret object, no placeholder value anywhere', () => {
    // The Secrets are made by create-secrets.sh with generated keys (deploy-secrets.test.ts).
    expect(byKind('Secret')).toEqual([]);
    expect(JSON.stringify(objects)).not.toMatch(/change-?me/i);
  });

  it('gives each process only the secret keys it uses, from one Secret per purpose', () => {
    const wls = workloads();
    expect(wls.map((w) => w.name).sort()).toEqual(Object.keys(SECRET_KEYS).sort());
    const sources = new Map<string, Set<string>>();
    for (const { name, pod } of wls) {
      for (const c of allContainers(pod)) {
        // No whole Secret in the environment: its other keys would reach the pod too.
        expect({ name, c: c.name, secretRefs: (c.envFrom ?? []).filter((r: any) => r.secretRef) }).toEqual({ name, c: c.name, secretRefs: [] });
      }
      // The console's init container gets no secret at all.
      for (const c of pod.spec.initContainers ?? []) expect((c.env ?? []).filter((e: any) => e.valueFrom)).toEqual([]);
      const refs = secretRefs(pod);
      expect({ name, keys: Object.keys(refs).sort() }).toEqual({ name, keys: [...SECRET_KEYS[name]].sort() });
      for (const [env, ref] of Object.entries(refs)) {
        expect(ref.key).toBe(env);
        sources.set(env, (sources.get(env) ?? new Set()).add(ref.name));
      }
      // Nor the service account's API token: no process calls the Kubernetes API.
      expect({ name, automount: pod.spec.automountServiceAccountToken }).toEqual({ name, automount: false });
      // The one Secret mounted as files is the pod's own internal certificate (no controller PKI, no CA key).
      expect({ name, volumes: secretVolumes(pod) }).toEqual({ name, volumes: name.startsWith('migrate-') ? [] : [`${name}-internal-tls`] });
    }
    // A value every process must share comes from one Secret; each context has its own database Secret,
    // the one its migration Job reads.
    for (const [env, names] of sources) if (env !== 'DATABASE_URL') expect({ env, secrets: names.size }).toEqual({ env, secrets: 1 });
    const database = (w: string) => secretRefs(wls.find((x) => x.name === w)!.pod).DATABASE_URL.name;
    for (const c of CONTEXTS) expect(database(`migrate-${c}`)).toBe(database(c));
    expect(new Set(CONTEXTS.map(database)).size).toBe(CONTEXTS.length);
  });

  it('mounts each process its own internal certificate, read-only, where ZITI_INTERNAL_TLS_DIR points', () => {
    for (const name of PROCESSES) {
      const pod = named('Deployment', name)!.spec.template.spec;
      const [c] = pod.containers;
      expect(c.env.find((e: { name: string }) => e.name === 'ZITI_INTERNAL_TLS_DIR')).toEqual({ name: 'ZITI_INTERNAL_TLS_DIR', value: TLS_DIR });
      // No subPath: the kubelet would not update the files when cert-manager renews the certificate.
      expect(c.volumeMounts.find((m: any) => m.mountPath === TLS_DIR)).toEqual({ name: 'internal-tls', mountPath: TLS_DIR, readOnly: true });
      const secretName = pod.volumes.find((v: any) => v.name === 'internal-tls').secret.secretName;
      const cert = byKind('Certificate').find((x) => x.spec.secretName === secretName);
      expect({ name, commonName: cert?.spec.commonName }).toEqual({ name, commonName: name });
    }
  });

  it('issues the internal certificates from a CA of their own: ECDSA P-256, 90 days renewed at 60, server and client auth', () => {
    const certs = byKind('Certificate');
    const issuer = (ref: any) => {
      expect(ref).toEqual({ name: expect.any(String), kind: 'Issuer', group: 'cert-manager.io' });
      return named('Issuer', ref.name)!;
    };
    const [ca, ...others] = certs.filter((x) => x.spec.isCA);
    expect(others).toEqual([]);
    expect(ca.spec.privateKey).toEqual(expect.objectContaining({ algorithm: 'ECDSA', size: 256 }));
    expect(issuer(ca.spec.issuerRef).spec).toEqual({ selfSigned: {} });
    const leaves = certs.filter((x) => !x.spec.isCA);
    expect(leaves.map((x) => x.spec.commonName).sort()).toEqual([...PROCESSES].sort());
    for (const x of leaves) {
      const svc = named('Service', x.spec.commonName)!.metadata.name;
      expect(x.spec).toEqual(
        expect.objectContaining({
          secretName: `${x.spec.commonName}-internal-tls`,
          dnsNames: expect.arrayContaining([svc, `${svc}.${kustomization.namespace}.svc`]),
          duration: '2160h',
          renewBefore: '720h',
          privateKey: expect.objectContaining({ algorithm: 'ECDSA', size: 256 }),
          usages: expect.arrayContaining(['server auth', 'client auth']),
        }),
      );
      expect(issuer(x.spec.issuerRef).spec).toEqual({ ca: { secretName: ca.spec.secretName } });
    }
  });

  it('denies ingress by default and admits each port only from the processes that call it', () => {
    const deny = byKind('NetworkPolicy').filter((np) => Object.keys(np.spec.podSelector).length === 0 && np.spec.policyTypes.includes('Ingress') && !np.spec.ingress?.length);
    expect(deny).toHaveLength(1);
    for (const d of byKind('Deployment')) {
      const name = d.metadata.name;
      const labels = d.spec.template.metadata.labels;
      for (const port of d.spec.template.spec.containers[0].ports) {
        const expected: Record<string, string[]> = {
          https: ['anywhere'],
          // The router control listener (fabric): routers, from wherever they are.
          ctrl: ['anywhere'],
          http: ['pod:gateway'],
          grpc: (GRPC_CALLERS[name] ?? []).map((c) => `pod:${c}`).sort(),
          metrics: ['namespace:monitoring'],
        };
        expect({ name, port: port.name, from: admitted(labels, port) }).toEqual({ name, port: port.name, from: expected[port.name] });
      }
    }
    // Every policy selects pods that exist (one that selects none is a typo the loop above cannot see).
    for (const np of byKind('NetworkPolicy')) {
      const selected = byKind('Deployment').filter((d) => selects(np.spec.podSelector, d.spec.template.metadata.labels));
      expect({ policy: np.metadata.name, selected: selected.length > 0 }).toEqual({ policy: np.metadata.name, selected: true });
    }
  });

  it('admits a gRPC port from exactly the processes whose configuration names its address, and HTTP from the gateway only', () => {
    const env = (c: string) => c.toUpperCase().replace(/-/g, '_');
    const reads = (p: string, suffix: string) => {
      const source = readFileSync(join(ROOT, 'services', p, 'src', 'config.ts'), 'utf8');
      return CONTEXTS.filter((c) => new RegExp(`\\b${env(c)}_${suffix}\\b`).test(source));
    };
    const present = CONTEXTS.filter((c) => !PENDING.includes(c));
    for (const c of present) {
      const callers = PROCESSES.filter((p) => p !== c && !PENDING.includes(p) && reads(p, 'GRPC').includes(c));
      expect({ context: c, callers: callers.sort() }).toEqual({ context: c, callers: GRPC_CALLERS[c]!.filter((p) => !PENDING.includes(p)) });
      expect({ context: c, httpCallers: PROCESSES.filter((p) => p !== c && !PENDING.includes(p) && reads(p, 'URL').includes(c)) }).toEqual({ context: c, httpCallers: ['gateway'] });
    }
  });

  it('deploys every process the internal plane knows, and the caller table only names them', () => {
    expect([...PROCESSES].sort()).toEqual([...CONTEXT_NAMES].sort());
    for (const c of CONTEXTS) expect({ c, callers: GRPC_CALLERS[c]!.every((p) => PROCESSES.includes(p)) && GRPC_CALLERS[c]!.includes('gateway') }).toEqual({ c, callers: true });
    // The calls the router control plane makes and answers (a few, as the NetworkPolicies must admit them).
    expect(GRPC_CALLERS.fabric).toEqual(['gateway', 'identity-auth', 'policy']);
    for (const c of ['identity-auth', 'pki-enrollment', 'policy', 'session']) expect({ c, fabric: GRPC_CALLERS[c]!.includes('fabric') }).toEqual({ c, fabric: true });
    expect(GRPC_CALLERS.posture).not.toContain('fabric');
  });
});
