import vm from 'node:vm';
import { type Expectation, type Violation, checkResponse, envelopeProblems, errorSummary, expectationFor } from './fuzz-checks.js';
import { ROW_COUNT_EXCEPTIONS, type RowCounter, type RowCounts, diff } from './fuzz-db.js';
import type { FuzzHttp, FuzzRequest, FuzzResponse } from './fuzz-http.js';
import { BASES, CALLERS, type Caller, type FuzzInput, type InputContext, InputBuilder, type Target, inputsFor } from './fuzz-inputs.js';
import { jsonText, withExtraField } from './fuzz-schema.js';

/**
 * Sends an operation's inputs for each caller and collects every violation, request by request,
 * instead of stopping at the first: row counts around each request, a settle after each
 * successful write, the unknown-field check, and the liveness probe after the batch.
 */

export interface Finding {
  target: string;
  operationId: string;
  caller: Caller;
  kind: string;
  detail: string;
  request: string;
  status: number;
  error: string;
  violations: Violation[];
}

/**
 * Uncaught exceptions and unhandled rejections of the whole process. The controller runs inside the
 * jest process, where a standalone controller would have died. While installed, this log is the
 * only listener (jest's own are set aside and put back by `uninstall`): jest would charge an error
 * raised in the controller's callbacks to the whole file, while the suite charges it to the request
 * that was in flight, as a `crash` violation of that operation.
 */
export class CrashLog {
  private readonly seen: string[] = [];
  private taken = 0;
  private saved: Partial<Record<'uncaughtException' | 'unhandledRejection', ((...a: unknown[]) => void)[]>> = {};
  private readonly onError = (e: unknown) => this.seen.push(e instanceof Error ? `${e.name}: ${e.message}`.slice(0, 600) : String(e).slice(0, 600));

  // The test's `process` is jest's sandbox copy; uncaught errors reach the real one.
  private readonly real = vm.runInThisContext('process') as NodeJS.Process;

  install(): void {
    for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
      this.saved[event] = this.real.rawListeners(event) as ((...a: unknown[]) => void)[];
      this.real.removeAllListeners(event);
      this.real.on(event, this.onError);
    }
  }

  uninstall(): void {
    for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
      this.real.removeListener(event, this.onError);
      for (const l of this.saved[event] ?? []) this.real.on(event, l);
    }
  }

  /** Errors since the last call. */
  takeNew(): string[] {
    const out = this.seen.slice(this.taken);
    this.taken = this.seen.length;
    return out;
  }

  get total(): number {
    return this.seen.length;
  }
}

export interface RunnerDeps {
  http: FuzzHttp;
  counter: RowCounter;
  crashes: CrashLog;
  token(caller: Caller): string | undefined;
  /** Renews the callers' sessions if an operation ended them. */
  refreshCallers(): Promise<void>;
  context(target: Target, caller: Caller): InputContext;
}

export const EXTRA_FIELD = 'someNewField';

export class FuzzRunner {
  private counts: RowCounts | undefined;
  requests = 0;
  /** Successful writes the runner waited for, and the time that took. */
  settles = 0;
  settleMs = 0;

  constructor(private readonly deps: RunnerDeps) {}

  /** Fuzzes one operation with all three callers; returns the violations found. */
  async run(target: Target): Promise<Finding[]> {
    const { route } = target;
    const expect = expectationFor(target.api, route);
    const findings: Finding[] = [];
    await this.deps.refreshCallers();
    this.counts = await this.deps.counter.counts();
    for (const caller of CALLERS) {
      const ctx = this.deps.context(target, caller);
      for (const input of inputsFor(target, caller, ctx)) {
        const { res, violations } = await this.exchange(input.req, caller, expect, input.mustRefuse === true);
        if (violations.length) findings.push(this.finding(target, caller, input, res, violations));
      }
      if (route.body) findings.push(...(await this.unknownField(target, caller, ctx, expect)));
    }
    const alive = await this.deps.http.send({ method: 'GET', target: `${BASES.client}/version` });
    if (alive.status !== 200) {
      findings.push({ target: describe(target), operationId: route.operationId, caller: 'none', kind: 'liveness', detail: 'GET /edge/client/v1/version after the batch', request: 'GET /edge/client/v1/version', status: alive.status, error: alive.error ?? errorSummary(alive), violations: [{ rule: 'alive', message: `version answered ${alive.status}` }] });
    }
    return findings;
  }

  /** One request with every per-request check (status, envelope, leaks, rows written, crashes). */
  async exchange(req: FuzzRequest, caller: Caller, expect: Expectation, mustRefuse: boolean): Promise<{ res: FuzzResponse; violations: Violation[] }> {
    const before = this.counts ?? (await this.deps.counter.counts());
    const res = await this.deps.http.send(req, this.deps.token(caller));
    this.requests += 1;
    const violations = checkResponse(res, expect, mustRefuse);
    for (const c of this.deps.crashes.takeNew()) violations.push({ rule: 'crash', message: `uncaught in the controller process: ${c}` });
    const ok = res.status >= 200 && res.status < 300;
    let after = await this.deps.counter.counts();
    if (!ok) {
      const d = diff(before, after, ROW_COUNT_EXCEPTIONS);
      if (d.length) violations.push({ rule: 'rows', message: `a refused request changed row counts: ${d.join(', ')}` });
    } else if (req.method !== 'GET') {
      const t = Date.now();
      after = await this.deps.counter.settle();
      this.settles += 1;
      this.settleMs += Date.now() - t;
    }
    this.counts = after;
    return { res, violations };
  }

  /**
   * A body that is valid except for an unknown property must not be refused for it. Sent with
   * the property first, then without; a 400 the plain body does not get, or an error naming the
   * property, is a violation. Once at the top level, once in every nested object.
   */
  private async unknownField(target: Target, caller: Caller, ctx: InputContext, expect: Expectation): Promise<Finding[]> {
    const out: Finding[] = [];
    const b = new InputBuilder(target, ctx);
    for (const nested of [false, true]) {
      const body = b.validBody();
      const extra = withExtraField(body, EXTRA_FIELD, 1, nested);
      if (nested && jsonText(extra) === jsonText(withExtraField(body, EXTRA_FIELD, 1, false))) continue;
      const send = (json: unknown) => this.exchange({ method: target.route.method, target: b.url(), body: Buffer.from(jsonText(json)) }, caller, expect, false);
      const withField = await send(extra);
      const plain = await send(b.validBody());
      const violations = [...withField.violations];
      const named = withField.res.status === 400 && JSON.stringify(withField.res.json ?? '').includes(EXTRA_FIELD);
      if (withField.res.status === 400 && (plain.res.status !== 400 || named)) {
        violations.push({ rule: 'unknown-field', message: `refused for the unknown property (${errorSummary(withField.res)}); without it: ${plain.res.status}` });
      }
      const input: FuzzInput = { kind: 'body:unknown-field', detail: nested ? `"${EXTRA_FIELD}" in every object` : `"${EXTRA_FIELD}" at the top level`, req: { method: target.route.method, target: b.url(), body: Buffer.from(jsonText(extra)) } };
      if (violations.length) out.push(this.finding(target, caller, input, withField.res, violations));
      if (plain.violations.length) out.push(this.finding(target, caller, { ...input, kind: 'baseline', detail: 'valid-looking body (unknown-field control)' }, plain.res, plain.violations));
    }
    return out;
  }

  private finding(target: Target, caller: Caller, input: FuzzInput, res: FuzzResponse, violations: Violation[]): Finding {
    return {
      target: describe(target),
      operationId: target.route.operationId,
      caller,
      kind: input.kind,
      detail: input.detail,
      request: showRequest(input.req),
      status: res.status,
      error: res.error ?? (res.status >= 400 || envelopeProblems(res).length === 0 ? errorSummary(res) : ''),
      violations,
    };
  }
}

export function describe(t: Target): string {
  return `${t.api} ${t.route.method} ${t.route.path} (${t.route.operationId})`;
}

/** A request as one line: method, target (shortened), body (escaped, shortened). */
export function showRequest(req: FuzzRequest): string {
  const target = req.target.length > 160 ? `${req.target.slice(0, 120)}…(${req.target.length} chars)` : req.target;
  const body = req.body === undefined ? '' : ` body=${JSON.stringify(req.body.toString('latin1')).slice(0, 200)}${req.body.length > 150 ? `…(${req.body.length} bytes)` : ''}`;
  const headers = req.rawHeaderLines?.length ? ` rawHeaders=${JSON.stringify(req.rawHeaderLines.map((l) => l.toString('latin1')))}` : req.headers ? ` headers=${JSON.stringify(req.headers)}` : '';
  return `${req.method} ${target}${headers}${body}`;
}

/** Control characters and lone surrogates as `\uXXXX`, so findings stay printable. */
export function printable(s: string): string {
  return s.replace(/[\u0000-\u0009\u000b-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** One line per finding, for failure messages and the findings file. */
export function showFinding(f: Finding): string {
  return printable(`[${f.violations.map((v) => v.rule).join(',')}] ${f.target} caller=${f.caller} ${f.kind} (${f.detail}) → ${f.status} ${f.error}\n    ${f.violations.map((v) => v.message).join('\n    ')}\n    request: ${f.request}`);
}
