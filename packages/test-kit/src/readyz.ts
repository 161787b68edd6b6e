import http from 'node:http';
import https from 'node:https';

/**
 * One `GET /readyz` on 127.0.0.1:`port`, as a kubelet's probe makes it (no client certificate,
 * the served one not checked): true on 200, false on any other answer, an error or the timeout.
 */
export function probeReadyz(port: number, scheme: 'http' | 'https' = 'https', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port, path: '/readyz', agent: false, timeout: timeoutMs };
    const done = (res: http.IncomingMessage) => {
      res.resume();
      resolve(res.statusCode === 200);
    };
    const req = scheme === 'https' ? https.get({ ...options, rejectUnauthorized: false }, done) : http.get(options, done);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
  });
}
