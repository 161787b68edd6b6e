import https from 'node:https';
import { READINESS } from '@ziti/test-kit';
import { gatewayStatus } from './cluster.js';

/** How long a request may take before it counts as a hang. */
export const REQUEST_BOUND_MS = 10_000;

export type Kind = 'login' | 'service-list' | 'session-create' | 'identity-create' | 'policy-create';

/** One request of the load, as recorded. `status` 0: no HTTP answer (see `code`). */
export interface Sample {
  /** Start and end, ms since the load began. */
  t0: number;
  t1: number;
  kind: Kind;
  gateway: string;
  status: number;
  /** The envelope's error code, or the transport failure (`ECONNRESET`, `TIMEOUT`, …). */
  code?: string;
  latencyMs: number;
  /** The body of a failed request (first 400 characters). */
  body?: string;
  /** Why a 503 is not a clean one (keys beside code/message/requestId, another message). */
  unclean?: string;
}

/** A write the API acknowledged: it must be readable afterwards. */
export interface AckedWrite {
  kind: 'identity' | 'service-policy';
  id: string;
  t: number;
}

export interface GatewayTarget {
  name: string;
  url: string;
}

export interface Answer {
  status: number;
  body: any;
  text: string;
}

/** The catalogue text of a 503: nothing else may be said about it. */
const UNAVAILABLE_MESSAGE = 'The service is unavailable, try again later';

/** Why a 503 envelope says more (or other) than code, catalogue message and request id; undefined when clean. */
export function uncleanUnavailable(text: string, body: any): string | undefined {
  const error = body?.error;
  if (!error || typeof error !== 'object') return `not an error envelope: ${text.slice(0, 200)}`;
  if (error.code !== 'SERVICE_UNAVAILABLE') return `code ${error.code}`;
  const extra = Object.keys(error).filter((k) => !['code', 'message', 'requestId'].includes(k));
  if (extra.length > 0) return `extra fields ${extra.join(', ')}: ${JSON.stringify(error).slice(0, 200)}`;
  if (error.message !== UNAVAILABLE_MESSAGE) return `message "${String(error.message).slice(0, 200)}"`;
  return undefined;
}

/**
 * A client-side load balancer over the gateways, as one in front of a controller behaves: requests
 * go round robin to gateways marked up; a connection failure marks its gateway down at once; a
 * health check (`/ziti-internal/readyz`, with the period, timeout and failure threshold of the
 * replicas' readiness, `READINESS`) marks it up after a success or down after consecutive
 * failures. With no gateway up it tries them all (fail open).
 */
export class GatewayPool {
  private readonly up = new Map<string, boolean>();
  private readonly failures = new Map<string, number>();
  private readonly agents = new Map<string, https.Agent>();
  private next = 0;
  private timer?: NodeJS.Timeout;

  constructor(readonly targets: GatewayTarget[]) {
    for (const t of targets) {
      this.up.set(t.name, true);
      // A connection per request: a kept-alive socket the server closes as it is reused would read
      // as a reset from a healthy gateway. The certificate is not the subject here.
      this.agents.set(t.name, new https.Agent({ keepAlive: false, rejectUnauthorized: false }));
    }
  }

  startChecks(): void {
    const check = () => {
      for (const t of this.targets) {
        void gatewayStatus(t.url, '/ziti-internal/readyz', READINESS.timeoutMs).then((status) => {
          const failures = status === 200 ? 0 : (this.failures.get(t.name) ?? 0) + 1;
          this.failures.set(t.name, failures);
          if (failures === 0) this.up.set(t.name, true);
          else if (failures >= READINESS.failureThreshold) this.up.set(t.name, false);
        });
      }
    };
    this.timer = setInterval(check, READINESS.periodMs);
  }

  pick(): GatewayTarget {
    const live = this.targets.filter((t) => this.up.get(t.name));
    const from = live.length > 0 ? live : this.targets;
    return from[this.next++ % from.length]!;
  }

  markDown(name: string): void {
    this.up.set(name, false);
  }

  /** One request with the bound: the answer, or a thrown Error whose `code` names the failure (`TIMEOUT` past the bound). */
  request(target: GatewayTarget, method: string, path: string, json?: unknown, token?: string): Promise<Answer> {
    const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    if (token) headers['zt-session'] = token;
    return new Promise<Answer>((resolve, reject) => {
      const req = https.request(`${target.url}${path}`, { method, headers, agent: this.agents.get(target.name) }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('error', reject);
        res.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(parts).toString('utf8');
          let body: any;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body, text });
        });
      });
      const timer = setTimeout(() => req.destroy(Object.assign(new Error('no answer within the bound'), { code: 'TIMEOUT' })), REQUEST_BOUND_MS);
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(payload);
    });
  }

  close(): void {
    clearInterval(this.timer);
    for (const a of this.agents.values()) a.destroy();
  }
}

/** Transport failures that mean "this gateway is gone" to a load balancer. */
const CONNECTION_FAILURES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** One kind of request of the load: what it sends, and what it keeps from a success. */
export interface Operation {
  kind: Kind;
  weight: number;
  run(pool: GatewayPool, target: GatewayTarget): Promise<Answer>;
  /** Called with a 2xx answer (a login keeps its token, a write its id). */
  onSuccess?(answer: Answer, t: number): void;
}

/**
 * The steady load: `ratePerSecond` requests a second, open loop (a slow answer does not slow the
 * rate), each operation picked by weight, each request recorded as a {@link Sample}.
 */
export class Load {
  readonly samples: Sample[] = [];
  /** Epoch ms of t = 0. */
  readonly started = Date.now();
  /**
   * This process's event-loop delays over 100 ms (t, ms): a late loop delays the load's requests
   * and clocks, not the controller, so each window reports its worst one.
   */
  readonly loopDelays: { t: number; ms: number }[] = [];
  private lagTimer?: NodeJS.Timeout;
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    readonly pool: GatewayPool,
    private readonly operations: Operation[],
    private readonly ratePerSecond: number,
  ) {}

  /** Ms since the load began (the time axis of every sample). */
  now(): number {
    return Date.now() - this.started;
  }

  start(): void {
    let last = Date.now();
    this.lagTimer = setInterval(() => {
      const late = Date.now() - last - 100;
      last = Date.now();
      if (late > 100) this.loopDelays.push({ t: this.now(), ms: late });
    }, 100);
    this.pool.startChecks();
    const total = this.operations.reduce((s, o) => s + o.weight, 0);
    let issued = 0;
    // Each tick issues what is due since the start, so a late timer (a busy host) does not lower the rate.
    this.timer = setInterval(() => {
      const due = Math.floor((this.now() * this.ratePerSecond) / 1000);
      for (; issued < due; issued++) {
        let r = Math.random() * total;
        const op = this.operations.find((o) => (r -= o.weight) < 0) ?? this.operations[0]!;
        const p = this.once(op);
        this.inFlight.add(p);
        void p.finally(() => this.inFlight.delete(p));
      }
    }, 1000 / this.ratePerSecond);
  }

  private async once(op: Operation): Promise<void> {
    const target = this.pool.pick();
    const t0 = this.now();
    const sample: Sample = { t0, t1: t0, kind: op.kind, gateway: target.name, status: 0, latencyMs: 0 };
    try {
      const answer = await op.run(this.pool, target);
      sample.status = answer.status;
      if (answer.status >= 200 && answer.status < 300) {
        op.onSuccess?.(answer, t0);
      } else {
        sample.code = typeof answer.body?.error?.code === 'string' ? answer.body.error.code : undefined;
        sample.body = answer.text.slice(0, 400);
        if (answer.status === 503) sample.unclean = uncleanUnavailable(answer.text, answer.body);
      }
    } catch (err) {
      const code = String((err as NodeJS.ErrnoException).code ?? (err as Error).message);
      sample.code = code;
      sample.body = (err as Error).message.slice(0, 400);
      if (CONNECTION_FAILURES.has(code)) this.pool.markDown(target.name);
    }
    sample.t1 = this.now();
    sample.latencyMs = sample.t1 - sample.t0;
    this.samples.push(sample);
  }

  /** Stops issuing requests and waits for those in flight (each ends within the bound); again: no-op. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.lagTimer);
    await Promise.all([...this.inFlight]);
    this.pool.close();
  }
}
