// What the deploy/k8s tests share: the manifests loaded, and who may call whom.
// The Kubernetes manifests cannot be applied here (no cluster, no container engine), so this
// checks what can be checked offline: every file parses, the kustomization lists them all, the
// references between objects (selectors, named ports, ConfigMaps, Secrets and certificates, HPA
// targets, the entry points the commands run) hold, each pod gets only the secrets it uses, and
// the NetworkPolicies admit each port only from the processes that call it (INTERNAL_RPC_CALLERS).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTEXT_NAMES, INTERNAL_RPC_CALLERS, INTERNAL_SERVICE_OWNERS } from '@ziti/service-kit';
import { loadAll } from 'js-yaml';

export const ROOT = join(__dirname, '..', '..', '..', '..');
export const K8S = join(ROOT, 'deploy', 'k8s');
export const CONTEXTS = ['identity-auth', 'pki-enrollment', 'policy', 'session', 'posture', 'fabric'];
export const PROCESSES = ['gateway', ...CONTEXTS];
/**
 * Contexts whose source is not in this tree yet (a context is deployed before it is merged): their
 * manifests are checked, the entry points and configuration they name are checked once the
 * source is here.
 */
export const PENDING = CONTEXTS.filter((c) => !existsSync(join(ROOT, 'services', c, 'src')));
export const TLS_DIR = '/etc/ziti/internal-tls';

export type Obj = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any; data?: any; stringData?: any };

export function load(file: string): Obj[] {
  return (loadAll(readFileSync(join(K8S, file), 'utf8')) as (Obj | null)[]).filter((d): d is Obj => d !== null);
}

export const kustomization = load('kustomization.yaml')[0] as unknown as { namespace: string; resources: string[] };
export const objects = kustomization.resources.flatMap(load);
export const byKind = (kind: string) => objects.filter((o) => o.kind === kind);
export const named = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);

/** Asserts the source of `node services/x/dist/main.js` (`services/x/src/main.ts`) exists. */
export function expectEntry(command: string[]): void {
  expect(command[0]).toBe('node');
  expect(command[1]).toMatch(/^services\/[a-z-]+\/dist\/[a-z-]+\.js$/);
  const source = command[1].replace('/dist/', '/src/').replace(/\.js$/, '.ts');
  if (PENDING.includes(command[1].split('/')[1]!)) return;
  expect(existsSync(join(ROOT, source)) ? 'present' : `missing ${source}`).toBe('present');
}

/** The secret keys each workload reads (its env name is the key's name); nothing else. */
export const SECRET_KEYS: Record<string, string[]> = {
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
export const GRPC_CALLERS: Record<string, string[]> = (() => {
  const callers: Record<string, Set<string>> = Object.fromEntries(CONTEXTS.map((c) => [c, new Set<string>()]));
  for (const [path, who] of Object.entries(INTERNAL_RPC_CALLERS)) {
    const owner = INTERNAL_SERVICE_OWNERS[path.split('/')[1]!];
    for (const c of owner ? [owner] : CONTEXTS) for (const caller of who) callers[c]!.add(caller);
  }
  return Object.fromEntries(Object.entries(callers).map(([c, set]) => [c, [...set].sort()]));
})();

/** Deployments and Jobs by name, with their pod templates. */
export const workloads = () => [...byKind('Deployment'), ...byKind('Job')].map((w) => ({ name: w.metadata.name, pod: w.spec.template }));
export const allContainers = (pod: any): any[] => [...(pod.spec.initContainers ?? []), ...pod.spec.containers];

/** Every secretKeyRef of a pod: env name → Secret and key. */
export function secretRefs(pod: any): Record<string, { name: string; key: string }> {
  const refs: Record<string, { name: string; key: string }> = {};
  for (const c of allContainers(pod)) {
    for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef) refs[e.name] = e.valueFrom.secretKeyRef;
  }
  return refs;
}

/** The Secrets a pod mounts as files. */
export const secretVolumes = (pod: any): string[] =>
  (pod.spec.volumes ?? []).flatMap((v: any) => [
    ...(v.secret ? [v.secret.secretName] : []),
    ...(v.projected?.sources ?? []).filter((s: any) => s.secret).map((s: any) => s.secret.name),
  ]);

export const NAME = 'app.kubernetes.io/name';
export const selects = (selector: any, labels: Record<string, string>): boolean => {
  if (selector.matchExpressions) throw new Error('matchExpressions: not handled by this check');
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
};

/** One `from` peer as `pod:<name>` or `namespace:<name>`; other shapes are refused, not guessed. */
export function peer(p: any): string {
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
export function admitted(labels: Record<string, string>, port: { name: string; containerPort: number }): string[] {
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

