/**
 * The console's going-live checklist: the account's prerequisites in order, each done or not, in
 * plain words, with who must act. Pure: it reads the same facts go-live and readiness decide on
 * (business verification, a signed agreement, a live balance covering one call's reserve, the
 * operator's approval) and decides nothing of its own.
 */

export type GoingLiveKey = 'business_verification' | 'agreement' | 'funds' | 'approval';

export interface GoingLiveStep {
  key: GoingLiveKey;
  done: boolean;
  detail: string;
  who: 'you' | 'operator';
}

export interface GoingLiveFacts {
  kybStatus: 'pending' | 'verified' | 'rejected' | string;
  /** The operator's word on the last review. */
  kybNote: string | null;
  /** When the business details were last submitted in the console; null when never. */
  detailsSubmittedAt: Date | null;
  /** The signature on file: version, date and who ("Name <email>", null when the operator recorded it). */
  agreement: { version: string; signedAt: Date; signedBy: string | null } | null;
  /** The agreement version in force (a newer one than signed is worth saying). */
  currentAgreementVersion: string;
  /** Live money the account can spend now, and what one live call holds (readiness's insufficient_balance rule). */
  liveAvailableCents: number;
  callReserveCents: number;
  minimumTopUpCents: number;
  wentLiveAt: Date | null;
}

const day = (d: Date) => d.toISOString().slice(0, 10);
const dollars = (cents: number) => `$${(cents / 100).toFixed(2)}`;

export function goingLiveSteps(f: GoingLiveFacts): { steps: GoingLiveStep[]; live: boolean } {
  return {
    steps: [businessVerification(f), agreement(f), funds(f), approval(f)],
    live: f.wentLiveAt !== null,
  };
}

function businessVerification(f: GoingLiveFacts): GoingLiveStep {
  const key = 'business_verification';
  if (f.kybStatus === 'verified') return { key, done: true, who: 'operator', detail: 'Your business is verified.' };
  if (f.kybStatus === 'rejected') {
    const why = f.kybNote ? ` The reviewer wrote: "${f.kybNote}"` : '';
    return { key, done: false, who: 'you', detail: `Business verification was not accepted.${why} Correct your business details and submit them again.` };
  }
  if (f.detailsSubmittedAt === null) {
    return { key, done: false, who: 'you', detail: 'Submit your business details (legal name, registration number, address, contacts and what you sell) for verification.' };
  }
  return { key, done: false, who: 'operator', detail: `Your business details were submitted on ${day(f.detailsSubmittedAt)} and are waiting for review.` };
}

function agreement(f: GoingLiveFacts): GoingLiveStep {
  const key = 'agreement';
  if (!f.agreement) return { key, done: false, who: 'you', detail: `Your account's owner reads and signs the reseller agreement (version ${f.currentAgreementVersion}).` };
  const by = f.agreement.signedBy ? ` by ${f.agreement.signedBy}` : ' (recorded by the operator)';
  const newer = f.agreement.version === f.currentAgreementVersion ? '' : ` Version ${f.currentAgreementVersion} is now in force; your owner can sign it.`;
  return { key, done: true, who: 'you', detail: `Version ${f.agreement.version} signed on ${day(f.agreement.signedAt)}${by}.${newer}` };
}

function funds(f: GoingLiveFacts): GoingLiveStep {
  const key = 'funds';
  const available = Math.max(0, f.liveAvailableCents);
  if (f.liveAvailableCents >= f.callReserveCents) {
    return { key, done: true, who: 'you', detail: `Your live balance of ${dollars(available)} covers the ${dollars(f.callReserveCents)} one call holds while it runs.` };
  }
  return {
    key,
    done: false,
    who: 'you',
    detail:
      `Your live balance is ${dollars(available)}; each live call holds ${dollars(f.callReserveCents)} while it runs. ` +
      `Add funds (a top-up is at least ${dollars(f.minimumTopUpCents)}).`,
  };
}

function approval(f: GoingLiveFacts): GoingLiveStep {
  const key = 'approval';
  if (f.wentLiveAt) return { key, done: true, who: 'operator', detail: `Approved: your account went live on ${day(f.wentLiveAt)}.` };
  return {
    key,
    done: false,
    who: 'operator',
    detail: 'The operator approves the account for live calling once business verification is done and the agreement is signed.',
  };
}
