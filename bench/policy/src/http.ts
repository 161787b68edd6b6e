import https from 'node:https';

/** A keep-alive HTTPS client trusting only the controller's CA (one connection per request in flight). */
export class Http {
  private readonly agent: https.Agent;
  private readonly url: URL;

  constructor(baseUrl: string, ca: string) {
    this.url = new URL(baseUrl);
    this.agent = new https.Agent({ ca, keepAlive: true, maxSockets: 8 });
  }

  request(method: string, path: string, token?: string, json?: unknown): Promise<{ status: number; body: any; ms: number }> {
    const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (token) headers['zt-session'] = token;
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const start = process.hrtime.bigint();
    return new Promise((resolve, reject) => {
      const req = https.request({ host: this.url.hostname, port: this.url.port, method, path, headers, agent: this.agent }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const ms = Number(process.hrtime.bigint() - start) / 1e6;
          const text = Buffer.concat(parts).toString('utf8');
          let body: any;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = text;
          }
          resolve({ status: res.statusCode ?? 0, body, ms });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  async login(username: string, password: string, api: 'client' | 'management'): Promise<string> {
    const res = await this.request('POST', `/edge/${api}/v1/authenticate?method=password`, undefined, { username, password });
    if (res.status !== 200) throw new Error(`login ${username} failed: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    return res.body.data.token as string;
  }

  close(): void {
    this.agent.destroy();
  }
}

/** p-th percentile (nearest rank) of the samples. */
export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
