// The router double enrolls an edge router the way `ziti router enroll` does.
import { X509Certificate } from 'node:crypto';
import { useController } from '../support/controller.js';
import { expectCreated } from '../support/envelope.js';
import { enrollRouter } from '../support/router-enroll.js';
import { fingerprintOf } from '../support/x509.js';

const ctl = useController();

describe('router enrollment (erott) as `ziti router enroll` does it', () => {
  it('enrolls with the management API JWT and keeps a client cert whose fingerprint the controller stores', async () => {
    const mgmt = await ctl().adminSession();
    const routerId = expectCreated(await mgmt.call('POST', '/edge-routers', { name: `er-double-${Date.now()}`, isTunnelerEnabled: false }), 'edge-routers');
    const jwt = (await mgmt.call('GET', `/edge-routers/${routerId}`)).body.data.enrollmentJwt as string;
    const id = await enrollRouter(jwt);
    expect(id.routerId).toBe(routerId);
    const client = new X509Certificate(id.certPem);
    expect(client.subject).toContain(`CN=${routerId}`);
    expect(new X509Certificate(id.serverCertPem).subjectAltName).toContain('IP Address:127.0.0.1');
    expect(id.caPem).toContain('BEGIN CERTIFICATE');
    const after = (await mgmt.call('GET', `/edge-routers/${routerId}`)).body.data;
    expect(after).toMatchObject({ isVerified: true, fingerprint: fingerprintOf(client) });
    await expect(enrollRouter(jwt)).rejects.toThrow(/enrollment failed: 4\d\d/);
  });
});
