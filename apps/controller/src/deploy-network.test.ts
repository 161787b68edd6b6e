// deploy/k8s checked offline: Services, the router control port, and NetworkPolicies against INTERNAL_RPC_CALLERS.
import { CONTEXT_NAMES, INTERNAL_RPC_CALLERS } from '@ziti/service-kit';
import { CONTEXTS, GRPC_CALLERS, PENDING, PROCESSES, ROOT, admitted, byKind, load, named, selects } from './testing/deploy-k8s.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('deploy/k8s network', () => {
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
      // A context calling its own replicas (fabric's relays) finds them by their rows, not its configuration.
      const others = GRPC_CALLERS[c]!.filter((p) => p !== c && !PENDING.includes(p));
      expect({ context: c, callers: callers.sort() }).toEqual({ context: c, callers: others });
      expect({ context: c, httpCallers: PROCESSES.filter((p) => p !== c && !PENDING.includes(p) && reads(p, 'URL').includes(c)) }).toEqual({ context: c, httpCallers: ['gateway'] });
    }
  });

  it('deploys every process the internal plane knows, and the caller table only names them', () => {
    expect([...PROCESSES].sort()).toEqual([...CONTEXT_NAMES].sort());
    for (const c of CONTEXTS) expect({ c, callers: GRPC_CALLERS[c]!.every((p) => PROCESSES.includes(p)) && GRPC_CALLERS[c]!.includes('gateway') }).toEqual({ c, callers: true });
    // The calls the router control plane makes and answers (a few, as the NetworkPolicies must admit them).
    expect(GRPC_CALLERS.fabric).toEqual(['fabric', 'gateway', 'identity-auth', 'policy']);
    for (const c of ['identity-auth', 'pki-enrollment', 'policy', 'session']) expect({ c, fabric: GRPC_CALLERS[c]!.includes('fabric') }).toEqual({ c, fabric: true });
    expect(GRPC_CALLERS.posture).not.toContain('fabric');
  });
});
