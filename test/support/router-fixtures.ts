import type { EdgeApi } from './clients.js';
import type { TestController } from './controller.js';
import { expectCreated } from './envelope.js';
import { type RouterDoubleOptions, RouterDouble } from './router-double.js';
import { type RouterIdentity, enrollRouter } from './router-enroll.js';

/** Creates an edge router on the management API and enrolls it as `ziti router enroll` does. */
export async function enrolledRouter(mgmt: EdgeApi, name: string, roleAttributes: string[] = []): Promise<RouterIdentity> {
  const id = expectCreated(await mgmt.call('POST', '/edge-routers', { name, roleAttributes, isTunnelerEnabled: false }), 'edge-routers');
  const jwt = (await mgmt.call('GET', `/edge-routers/${id}`)).body.data.enrollmentJwt as string;
  return enrollRouter(jwt);
}

/** Connects a router double to the test controller's control listener. */
export function connectRouter(ctl: TestController, identity: RouterIdentity, o: Partial<RouterDoubleOptions> = {}): Promise<RouterDouble> {
  return RouterDouble.connect({ identity, host: '127.0.0.1', port: ctl.running.routerCtrlPort, heartbeatIntervalMs: 0, ...o });
}

/** Polls `probe` every 100 ms until it returns a truthy value or `timeoutMs` passes (then returns the last value). */
export async function poll<T>(probe: () => Promise<T> | T, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The edge router as the management API shows it. */
export async function edgeRouter(mgmt: EdgeApi, id: string): Promise<Record<string, unknown>> {
  return (await mgmt.call('GET', `/edge-routers/${id}`)).body.data as Record<string, unknown>;
}

/** GET /fabric/v1<path> with the admin token; the `data` of the envelope. */
export async function fabricGet(ctl: TestController, mgmt: EdgeApi, path: string): Promise<unknown> {
  const r = await ctl.http.request({ method: 'GET', path: `/fabric/v1${path}`, token: mgmt.token });
  if (r.status !== 200) throw new Error(`GET /fabric/v1${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.body.data;
}
