/**
 * Who refused an eviction, read from the API server's answer. Two kinds of
 * budget can answer 429 to `pods/eviction`:
 * - a PodDisruptionBudget, checked by the API server itself: the message is
 *   upstream's fixed sentence and the budget is named in the DisruptionBudget
 *   cause (`The disruption budget web-pdb needs 2 healthy pods and has 2
 *   currently`);
 * - a DomainDisruptionBudget, checked by our validating webhook: the denial
 *   is `admission webhook "…" denied the request: <our message>`, and our
 *   message names the budget (`namespace/name`) and the domain
 *   (core/disruption-decision.ts), e.g. `Cannot evict pod as it would violate
 *   the DomainDisruptionBudget default/app-ddb in domain "zone-b": …`.
 * Both are read from the text, because that is all a client like kubectl
 * sees; an answer in neither shape gives `budget: undefined` and the record
 * keeps the message. Pure.
 */

export interface RefusingBudget {
  kind: 'PodDisruptionBudget' | 'DomainDisruptionBudget';
  name: string;
  /** The domain, for a DomainDisruptionBudget whose message names one. */
  domain?: string;
}

/** The parts of a Status answer a refusal is read from. */
export interface RefusalStatus {
  message?: string;
  details?: { causes?: { reason?: string; message?: string }[] };
}

const PDB_CAUSE = /^The disruption budget (\S+?) /;
/** `DomainDisruptionBudget [namespace/]name`: names are DNS subdomains. */
const DDB_NAME = /DomainDisruptionBudget (?:[a-z0-9][-a-z0-9.]*\/)?([a-z0-9](?:[-a-z0-9.]*[a-z0-9])?)/;
const DDB_DOMAIN = /\bdomain ("[^"]*"|\S+?)(?=[\s:;,)]|$)/;

/** The budget that refused an eviction (undefined: the answer names none). */
export function refusingBudget(status: RefusalStatus): RefusingBudget | undefined {
  const message = status.message ?? '';
  const ddb = DDB_NAME.exec(message);
  if (ddb?.[1] !== undefined) {
    const out: RefusingBudget = { kind: 'DomainDisruptionBudget', name: ddb[1] };
    const domain = DDB_DOMAIN.exec(message.slice(ddb.index))?.[1];
    if (domain !== undefined) out.domain = domain.startsWith('"') ? domain.slice(1, -1) : domain;
    return out;
  }
  for (const cause of status.details?.causes ?? []) {
    const name = PDB_CAUSE.exec(cause.message ?? '')?.[1];
    if (cause.reason === 'DisruptionBudget' && name !== undefined) return { kind: 'PodDisruptionBudget', name };
  }
  return undefined;
}

/** `DomainDisruptionBudget/app-ddb` — how reports and expectations name a budget. */
export function budgetLabel(b: Pick<RefusingBudget, 'kind' | 'name'>): string {
  return `${b.kind}/${b.name}`;
}
