import { type Api, createUser, type Network } from './network.js';

const CLIENT = '/edge/client/v1';
const MGMT = '/edge/management/v1';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Delivery {
  /** The policy change was acknowledged during the fault. */
  granted: boolean;
  /** Why not, when it was not (the last answer). */
  grantStatus?: string;
  /** Ms from the dependency's return until each view showed the change (undefined: not within the bound). */
  serviceUpdatesMs?: number;
  serviceListMs?: number;
  sessionMs?: number;
}

/**
 * An event crossing a fault: an identity that can not see a service yet, logged in before the
 * fault; during it, a service policy grants it the service. After the fault the change must show in
 * the session context's view (its `lastChangeAt` in `/current-api-session/service-updates` moves,
 * which only the `service-access.changed` event does), in its service list (policy) and in a
 * session create for the service (session asking policy).
 */
export class EventProbe {
  private lastChangeAt?: string;

  private constructor(
    private readonly api: Api,
    private readonly net: Network,
    readonly attribute: string,
    readonly serviceId: string,
    private readonly token: string,
  ) {}

  static async create(api: Api, net: Network, name: string): Promise<EventProbe> {
    const attribute = `${net.tag}-probe-${name}`;
    const serviceId = await api.expect(201, 'POST', `${MGMT}/services`, { name: attribute, roleAttributes: [`${net.tag}-probe-svc`], encryptionRequired: true }, net.adminToken);
    const user = await createUser(api, net.adminToken, attribute, [attribute, `${net.tag}-probers`]);
    return new EventProbe(api, net, attribute, serviceId, await api.login(user.username, user.password));
  }

  private async serviceUpdates(): Promise<string | undefined> {
    const res = await this.api.call('GET', `${CLIENT}/current-api-session/service-updates`, undefined, this.token);
    return res.status === 200 ? (res.body?.data?.lastChangeAt as string) : undefined;
  }

  /** Reads the view before the fault (long after the probe's own setup events). */
  async arm(): Promise<void> {
    this.lastChangeAt = await this.serviceUpdates();
    if (this.lastChangeAt === undefined) throw new Error(`${this.attribute}: service-updates did not answer before the fault`);
  }

  /** Grants the service, tried every second until acknowledged or `deadline` (ms epoch). */
  async grant(deadline: number): Promise<{ granted: boolean; status: string }> {
    let status = 'not tried';
    do {
      const res = await this.api
        .call('POST', `${MGMT}/service-policies`, { name: `${this.attribute}-grant`, type: 'Dial', semantic: 'AnyOf', identityRoles: [`#${this.attribute}`], serviceRoles: [`@${this.serviceId}`], postureCheckRoles: [] }, this.net.adminToken)
        .catch((err: Error) => ({ status: 0, text: err.message }));
      if (res.status === 201) return { granted: true, status: '201' };
      status = `${res.status} ${res.text.slice(0, 200)}`;
      await sleep(1000);
    } while (Date.now() < deadline);
    return { granted: false, status };
  }

  /** Polls the three views from `backAt` (ms epoch) for up to `boundMs`; a view missing from the answer did not show within it. */
  async delivered(backAt: number, boundMs: number): Promise<Pick<Delivery, 'serviceUpdatesMs' | 'serviceListMs' | 'sessionMs'>> {
    const out: Pick<Delivery, 'serviceUpdatesMs' | 'serviceListMs' | 'sessionMs'> = {};
    const deadline = backAt + boundMs;
    while (Date.now() < deadline && (out.serviceUpdatesMs === undefined || out.serviceListMs === undefined || out.sessionMs === undefined)) {
      const elapsed = () => Math.max(0, Date.now() - backAt);
      const probes: Promise<void>[] = [];
      if (out.serviceUpdatesMs === undefined) {
        probes.push(this.serviceUpdates().catch(() => undefined).then((at) => void (at !== undefined && at !== this.lastChangeAt && (out.serviceUpdatesMs = elapsed()))));
      }
      if (out.serviceListMs === undefined) {
        probes.push(
          this.api
            .call('GET', `${CLIENT}/services?limit=25`, undefined, this.token)
            .then((r) => void (r.status === 200 && (r.body?.data ?? []).some((s: { id: string }) => s.id === this.serviceId) && (out.serviceListMs = elapsed())))
            .catch(() => undefined),
        );
      }
      if (out.sessionMs === undefined) {
        probes.push(
          this.api
            .call('POST', `${CLIENT}/sessions`, { serviceId: this.serviceId, type: 'Dial' }, this.token)
            .then((r) => void (r.status === 201 && (out.sessionMs = elapsed())))
            .catch(() => undefined),
        );
      }
      await Promise.all(probes);
      await sleep(250);
    }
    // A probe round may outlast the deadline: what showed only after it did not show within the bound.
    for (const key of ['serviceUpdatesMs', 'serviceListMs', 'sessionMs'] as const) if ((out[key] ?? 0) > boundMs) delete out[key];
    return out;
  }
}
