import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import https from 'node:https';
import { csrPem, keyPem, pkcs7Certificates, servedCertificate } from './x509.js';

/** What `ziti router enroll` writes: one key, the client and server certificates, the CA bundle, the ctrl endpoints. */
export interface RouterIdentity {
  routerId: string;
  keyPem: string;
  /** Client certificate (chain) PEM: presented on the control channel; its SHA-1 is the stored fingerprint. */
  certPem: string;
  serverCertPem: string;
  /** The CA bundle of the enrollment response (`identity.ca`). */
  caPem: string;
  /** `ctrl`/`ctrls` claims of the JWT, e.g. `tls:127.0.0.1:6262` (empty when it has none). */
  ctrlEndpoints: string[];
}

export interface EnrollRouterOptions {
  keyType?: 'ec' | 'rsa';
  /** `edge.csr.sans` of the router config (both CSRs carry them). Default dns localhost, ip 127.0.0.1. */
  sans?: { dns?: string[]; ips?: string[] };
}

function request(url: URL, o: { method: string; ca?: string[]; pin?: string; body?: string }): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: o.method,
        ca: o.ca,
        rejectUnauthorized: o.pin === undefined,
        headers: o.body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(o.body) },
      },
      (res) => {
        if (o.pin !== undefined) {
          const served = (res.socket as import('node:tls').TLSSocket).getPeerCertificate();
          if (new X509Certificate(served.raw).fingerprint256 !== o.pin) return reject(new Error('issuer certificate changed'));
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/**
 * Enrolls an edge router the way `ziti router enroll` does (openziti/ziti v2.0.3
 * `router/enroll/enroll.go`, sdk-golang `EnrollmentClaims.EnrolmentUrl`): verifies the JWT with the
 * certificate served at its issuer, fetches the CAs from `/.well-known/est/cacerts` (trusting
 * that certificate), makes ONE key with a client and a server CSR (CN = the JWT's `sub`), and
 * POSTs `{certCsr, serverCertCsr}` to `<iss>/edge/client/v1/enroll?method=erott&token=<jti>`
 * over TLS trusting those CAs.
 */
export async function enrollRouter(jwt: string, o: EnrollRouterOptions = {}): Promise<RouterIdentity> {
  const { decodeJwt, jwtVerify } = await import('jose');
  const claims = decodeJwt(jwt);
  if (claims.em !== 'erott') throw new Error(`not a router enrollment JWT (em=${String(claims.em)})`);
  const iss = new URL(String(claims.iss));
  const signer = await servedCertificate(iss.hostname, Number(iss.port || 443));
  await jwtVerify(jwt, signer.publicKey);
  const est = await request(new URL('/.well-known/est/cacerts', iss), { method: 'GET', pin: signer.fingerprint256 });
  if (est.status !== 200) throw new Error(`GET /.well-known/est/cacerts: ${est.status}`);
  const roots = pkcs7Certificates(est.text).map((c) => c.toString());
  const keys = o.keyType === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const routerId = String(claims.sub);
  const sans = { dns: o.sans?.dns ?? ['localhost'], ips: o.sans?.ips ?? ['127.0.0.1'] };
  const url = new URL('/edge/client/v1/enroll', iss);
  url.searchParams.set('method', 'erott');
  url.searchParams.set('token', String(claims.jti));
  const body = JSON.stringify({ serverCertCsr: csrPem(keys, { commonName: routerId, ...sans }), certCsr: csrPem(keys, { commonName: routerId, ...sans }) });
  const res = await request(url, { method: 'POST', ca: roots, body });
  if (res.status !== 200) throw new Error(`router enrollment failed: ${res.status} ${res.text.slice(0, 300)}`);
  const data = (JSON.parse(res.text) as { data: { cert?: string; serverCert?: string; ca?: string } }).data;
  if (!data.cert || !data.serverCert || !data.ca) throw new Error('enrollment response lacks cert, serverCert or ca');
  const ctrls = [claims.ctrl, ...(Array.isArray(claims.ctrls) ? claims.ctrls : [])].filter((c): c is string => typeof c === 'string');
  return { routerId, keyPem: keyPem(keys), certPem: data.cert, serverCertPem: data.serverCert, caPem: data.ca, ctrlEndpoints: ctrls };
}
