// deploy/k8s checked offline: files, workloads, probes, metrics, migrations, config, secrets and certificates.
import { CONTEXTS, K8S, NAME, PROCESSES, SECRET_KEYS, TLS_DIR, allContainers, byKind, expectEntry, kustomization, load, named, objects, secretRefs, secretVolumes, selects, workloads } from './testing/deploy-k8s.js';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

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

});
