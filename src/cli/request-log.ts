/**
 * `-v`: kubectl's request logs on stderr, as client-go's round-tripper writes them, in klog's line
 * format (`I1127 12:00:00.123456 <pid> request.go] GET https://… 200 OK in 5 milliseconds`):
 *
 * - 6: where the configuration came from, then one line per request: method, URL, status, time;
 * - 7: also the request headers (credentials masked, as kubectl masks them) and the response status;
 * - 8: also the response headers and the bodies, each cut at 1 KiB;
 * - 9: also each request as a curl command, bodies cut at 10 KiB;
 * - 10: bodies whole.
 *
 * Levels below 6 print nothing more than without `-v`.
 */
import type { Clock } from '../clock/clock.ts';
import type { RequestTrace } from '../client/transport.ts';

const MASKED = new Set(['authorization', 'proxy-authorization']);

function klogTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getMonth() + 1)}${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds() * 1000, 6)}`;
}

function masked(name: string, value: string): string {
  if (!MASKED.has(name.toLowerCase())) return value;
  const space = value.indexOf(' ');
  return space === -1 ? '<masked>' : `${value.slice(0, space)} <masked>`;
}

function truncate(body: string, verbosity: number): string {
  if (verbosity >= 10) return body;
  const max = verbosity >= 9 ? 10_240 : 1_024;
  return body.length <= max ? body : `${body.slice(0, max)} [truncated ${body.length - max} chars]`;
}

function values(v: string | string[] | number | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v.map(String) : [String(v)];
}

/** A logger of requests at `verbosity` (undefined below 6: nothing to log). */
export function requestLog(verbosity: number, clock: Clock, write: (text: string) => void, pid: number): RequestTrace | undefined {
  if (verbosity < 6) return undefined;
  const line = (text: string) => write(`I${klogTime(clock.now())} ${String(pid).padStart(7)} request.go] ${text}\n`);
  return {
    request({ method, url, headers, body }) {
      if (verbosity >= 9) {
        const h = Object.entries(headers).flatMap(([k, v]) => values(v).map((x) => ` -H "${k}: ${masked(k, x)}"`)).join('');
        line(`curl -v -X${method}${h} '${url}'`);
      }
      if (verbosity >= 7) {
        line(`${method} ${url}`);
        line('Request Headers:');
        for (const [k, v] of Object.entries(headers)) for (const x of values(v)) line(`    ${k}: ${masked(k, x)}`);
      }
      if (verbosity >= 8 && body !== undefined) line(`Request Body: ${truncate(body.toString('utf8'), verbosity)}`);
    },
    response({ method, url, status, statusText, headers, ms, error }) {
      const outcome = error !== undefined ? `(error: ${error})` : `${status ?? ''} ${statusText ?? ''}`.trim();
      if (verbosity >= 7) line(`Response Status: ${outcome} in ${ms} milliseconds`);
      else line(`${method} ${url} ${outcome} in ${ms} milliseconds`);
      if (verbosity >= 8 && headers !== undefined) {
        line('Response Headers:');
        for (const [k, v] of Object.entries(headers)) for (const x of values(v)) line(`    ${k}: ${x}`);
      }
    },
    responseBody({ text }) {
      if (verbosity >= 8) line(`Response Body: ${truncate(text, verbosity)}`);
    },
  };
}

/** The line `-v 6` starts with: where the connection settings came from. */
export function configLoadedLine(verbosity: number, clock: Clock, pid: number, source: string): string {
  if (verbosity < 6) return '';
  const where = source === 'in-cluster' ? 'the in-cluster service account' : source === 'flags' ? 'the command-line flags' : `file: ${source}`;
  return `I${klogTime(clock.now())} ${String(pid).padStart(7)} loader.go] Config loaded from ${where}\n`;
}
