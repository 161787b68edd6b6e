// deploy/k8s/create-secrets.sh, run against a stand-in `kubectl` that keeps the Secrets in files:
// it must make exactly the Secrets and keys the manifests read, with keys the processes accept
// (random, at least 32 characters), and never replace one that exists.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';

const K8S = join(__dirname, '..', '..', '..', 'deploy', 'k8s');
const SCRIPT = join(K8S, 'create-secrets.sh');
const GENERATED = ['ZITI_INTERNAL_SECRET', 'ZITI_SERVER_KEY_SECRET', 'ZITI_PKI_KEY', 'ZITI_MFA_SECRET'];

const load = (file: string): any[] => loadAll(readFileSync(join(K8S, file), 'utf8')).filter((d) => d !== null);
const kustomization = load('kustomization.yaml')[0] as { namespace: string; resources: string[] };

/** Secret name → the keys the pods read from it (secretKeyRef), from the manifests. */
function referenced(): Record<string, string[]> {
  const refs: Record<string, Set<string>> = {};
  for (const o of kustomization.resources.flatMap(load)) {
    const pod = o.spec?.template?.spec;
    for (const c of [...(pod?.initContainers ?? []), ...(pod?.containers ?? [])]) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (ref) (refs[ref.name] ??= new Set()).add(ref.key);
      }
    }
  }
  return Object.fromEntries(Object.entries(refs).map(([k, v]) => [k, [...v].sort()]));
}

// `kubectl -n NS get secret NAME --ignore-not-found -o name` and
// `kubectl -n NS create secret generic NAME --from-env-file=/dev/stdin`, kept in $STORE/NS/NAME.
const FAKE_KUBECTL = `#!/bin/sh
echo "$*" >> "$STORE/argv.log"
[ "$1" = -n ] || exit 2
ns=$2
shift 2
mkdir -p "$STORE/$ns"
case "$1 $2" in
  "get secret") if [ -f "$STORE/$ns/$3" ]; then echo "secret/$3"; fi ;;
  "create secret")
    [ "$3" = generic ] && [ "$5" = --from-env-file=/dev/stdin ] || exit 2
    cat > "$STORE/$ns/$4"
    echo "secret/$4 created" ;;
  *) exit 2 ;;
esac
`;

let dir: string;
let store: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'create-secrets-'));
  store = join(dir, 'store');
  mkdirSync(join(dir, 'bin'));
  mkdirSync(store);
  writeFileSync(join(dir, 'bin', 'kubectl'), FAKE_KUBECTL);
  chmodSync(join(dir, 'bin', 'kubectl'), 0o755);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the script with only these settings in its environment (not the test run's DATABASE_URL). */
function run(settings: Record<string, string>, args: string[] = []) {
  const env = { PATH: `${join(dir, 'bin')}:${process.env.PATH}`, STORE: store, ...settings };
  return spawnSync('sh', [SCRIPT, ...args], { env, encoding: 'utf8' });
}

/** The Secrets made in a namespace: name → key → value. */
function secrets(ns: string): Record<string, Record<string, string>> {
  const nsDir = join(store, ns);
  if (!existsSync(nsDir)) return {};
  return Object.fromEntries(
    readdirSync(nsDir).map((name) => {
      const lines = readFileSync(join(nsDir, name), 'utf8').split('\n').filter(Boolean);
      return [name, Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))];
    }),
  );
}

const URLS = {
  NATS_URL: 'nats://nats.example.internal:4222',
  REDIS_URL: 'redis://:secret@redis.example.internal:6379',
  DATABASE_URL: 'postgresql://ziti:pw@postgres.example.internal:5432/ziti',
  POLICY_DATABASE_URL: 'postgresql://policy:pw@postgres.example.internal:5432/ziti?sslmode=require',
};

describe('deploy/k8s/create-secrets.sh', () => {
  it('makes exactly the Secrets and keys the pods read, in the kustomization namespace, with random keys', () => {
    const result = run(URLS);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    const made = secrets(kustomization.namespace);
    const keys = Object.fromEntries(Object.entries(made).map(([name, kv]) => [name, Object.keys(kv).sort()]));
    expect(keys).toEqual(referenced());

    const value = (key: string) => Object.values(made).find((kv) => key in kv)![key];
    const generated = GENERATED.map(value);
    // The processes refuse a secret shorter than 32 characters or a placeholder.
    for (const v of generated) expect(v).toMatch(/^[A-Za-z0-9+/=]{32,}$/);
    expect(new Set(generated).size).toBe(GENERATED.length);
    expect(value('ZITI_PWD').length).toBeGreaterThanOrEqual(16);
    // Never on kubectl's command line (visible to every user of the machine).
    const argv = readFileSync(join(store, 'argv.log'), 'utf8');
    for (const v of [...generated, value('ZITI_PWD'), URLS.REDIS_URL]) expect(argv).not.toContain(v);

    expect(made['ziti-messaging']).toEqual({ NATS_URL: URLS.NATS_URL, REDIS_URL: URLS.REDIS_URL });
    expect(made['policy-database'].DATABASE_URL).toBe(URLS.POLICY_DATABASE_URL);
    for (const c of ['identity-auth', 'pki-enrollment', 'session', 'posture', 'fabric']) expect(made[`${c}-database`].DATABASE_URL).toBe(URLS.DATABASE_URL);
  });

  it('uses the namespace it is given and a ZITI_PWD that is set', () => {
    expect(run({ ...URLS, ZITI_PWD: 'an admin password' }, ['ziti-test']).status).toBe(0);
    expect(secrets('ziti-test')['ziti-admin']).toEqual({ ZITI_PWD: 'an admin password' });
    expect(secrets(kustomization.namespace)).toEqual({});
  });

  it('creates nothing when a setting is missing or a placeholder, and names the setting', () => {
    const { NATS_URL: _, ...noNats } = URLS;
    const missing = run(noNats);
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain('NATS_URL');
    const { DATABASE_URL: __, ...noDatabase } = URLS;
    const fallback = run(noDatabase);
    expect(fallback.stderr).toContain('IDENTITY_AUTH_DATABASE_URL (or DATABASE_URL)');
    const placeholder = run({ ...URLS, DATABASE_URL: 'postgresql://ziti:change-me@postgres:5432/ziti' });
    expect(placeholder.status).not.toBe(0);
    expect(placeholder.stderr).toContain('DATABASE_URL');
    expect(placeholder.stderr).toContain('placeholder');
    expect(run({ ...URLS, ZITI_PWD: 'change-me-admin-password' }).stderr).toContain('ZITI_PWD holds a placeholder');
    expect(secrets(kustomization.namespace)).toEqual({});
  });

  it('keeps a Secret that exists (the stored keys must not change) and makes the missing ones', () => {
    const ns = kustomization.namespace;
    mkdirSync(join(store, ns));
    writeFileSync(join(store, ns, 'ziti-pki-key'), 'ZITI_PKI_KEY=the key the stored private keys are sealed with\n');
    const first = run(URLS);
    expect(first.status).toBe(0);
    expect(first.stdout).toContain('secret/ziti-pki-key exists: kept');
    const made = secrets(ns);
    expect(made['ziti-pki-key']).toEqual({ ZITI_PKI_KEY: 'the key the stored private keys are sealed with' });
    expect(Object.keys(made).sort()).toEqual(Object.keys(referenced()).sort());
    // A second run changes nothing.
    expect(run(URLS).status).toBe(0);
    expect(secrets(ns)).toEqual(made);
  });
});
