import https from 'node:https';

export interface ApiResponse {
  status: number;
  body: any;
}

/** A keep-alive HTTPS client of the Edge APIs trusting only the controller's CA. */
export class Api {
  private readonly agent: https.Agent;
  private readonly url: URL;
  token: string | undefined;

  constructor(baseUrl: string, ca: string, maxSockets = 32) {
    this.url = new URL(baseUrl);
    this.agent = new https.Agent({ ca, keepAlive: true, maxSockets });
  }

  request(method: string, path: string, json?: unknown, token = this.token): Promise<ApiResponse> {
    const payload = json === undefined ? undefined : Buffer.from(JSON.stringify(json));
    const headers: Record<string, string | number> = { accept: 'application/json' };
    if (token) headers['zt-session'] = token;
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    return new Promise((resolve, reject) => {
      const req = https.request({ host: this.url.hostname, port: this.url.port, method, path, headers, agent: this.agent }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          let body: any = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON: kept as text
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** A management-API write that must answer `status`; returns `data.id` when there is one. */
  async mgmt(method: string, path: string, json: unknown, status = 201): Promise<string> {
    const r = await this.request(method, `/edge/management/v1${path}`, json);
    if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
    return r.body?.data?.id as string;
  }

  async login(username: string, password: string, api: 'client' | 'management'): Promise<string> {
    const r = await this.request('POST', `/edge/${api}/v1/authenticate?method=password`, { username, password }, '');
    if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    return r.body.data.token as string;
  }

  close(): void {
    this.agent.destroy();
  }
}
