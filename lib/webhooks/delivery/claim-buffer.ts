import type { Claim } from "../model.ts";
import { ClaimLedger, type ClaimPlace } from "./claim-ledger.ts";
import type { Freshness } from "./lease-rules.ts";
import type { OutageGate } from "./loop-outage.ts";

/**
 * The claims a worker holds ready beyond its requests in flight: the claim feed's store of
 * them (claim-feed.ts decides when to top it up; nothing else uses it). It tops itself up from
 * the queue, hands out claims that may start now, renews the ones held too long, holds
 * everything while the database cannot record a result, and gives back what it holds when the
 * worker stops. It is always in one of these modes:
 *
 * - STOPPED: holds nothing, hands out nothing. `start()` → ACCEPTING.
 * - ACCEPTING: hands out held claims in order, each as Freshness.prepare allows. A claim that
 *   may not start as held (its webhook values too old, its lease too short) is set aside with
 *   every other such claim, and a renewal of them starts → RECHECKING. When the send gate is
 *   closed (the database is unreachable, or a result waits to be written) → GATED.
 * - RECHECKING: one renewal under way; claims that may start still go out, claims found stale
 *   meanwhile wait for the next renewal. When it settles → ACCEPTING (the renewed claims first),
 *   and straight back to RECHECKING with a renewal of the claims set aside meanwhile, if any.
 * - GATED: hands out nothing until the gate opens → ACCEPTING. No renewal runs in this mode, and
 *   claims renewed before it are checked again after it.
 * - DRAINING: `drain()` gives back everything held and waits for a renewal under way, whose
 *   claims are given back too → STOPPED.
 *
 * Modes change only in the `setMode…` functions, each of which asserts where it comes from. What
 * it holds is asserted too, on every move (ClaimLedger): a delivery is in one place at a time
 * (ready, set aside, being renewed, or handed out: sending, then recording until it is handled), a
 * claim is taken in only for a delivery not already held (another is given back alone), and only
 * claims held are given back.
 */
export type ClaimBufferMode = "STOPPED" | "ACCEPTING" | "RECHECKING" | "GATED" | "DRAINING";

export interface ClaimBufferOptions {
  /** Slots: a renewal's claims that can start at once start without another check. */
  concurrency: number;
  claim(limit: number): Promise<Claim[]>;
  /** Renews held claims: those that may be sent, with new leases and current webhooks. */
  renew?(claims: Claim[]): Promise<Claim[]>;
  /** Gives claims back (counted and reported by the worker); never throws. */
  release(claims: Claim[]): Promise<void>;
  /** Absent: every held claim may start as it is. */
  freshness?: Freshness;
  gate: OutageGate;
  /** Claims can be taken again (a renewal settled, the gate opened). */
  onReady(): void;
  onClaimed(claims: Claim[]): void;
  /** Claims dropped by a renewal (no longer ours, webhook disabled or gone). */
  onWithdrawn(count: number): void;
  onRenewError(error: unknown, claims: Claim[]): void;
  /** A claim came for a delivery already held (`at`); it was given back, the others kept. */
  onConflict(claim: Claim, at: ClaimPlace): void;
}

/** What take() hands out when it hands out nothing (most calls: no new allocation). */
const NONE: readonly Claim[] = Object.freeze([]);

export class ClaimBuffer {
  #mode: ClaimBufferMode = "STOPPED";
  readonly #options: ClaimBufferOptions;
  /** Claimed and not started, oldest first. */
  readonly #ready: Claim[] = [];
  /** Set aside for the next renewal. */
  readonly #stale: Claim[] = [];
  /** Claims in the renewal under way, and its end. */
  #renewing: { claims: readonly Claim[]; size: number; settled: Promise<void> } | null = null;
  /** Just renewed: handed out by the next take() without asking Freshness again. */
  readonly #renewed = new Set<Claim>();
  /** Ends the wait for the gate to open when the buffer drains. */
  #gateWait = new AbortController();
  /** Where each claim is, with every move asserted. */
  readonly #ledger = new ClaimLedger();

  constructor(options: ClaimBufferOptions) {
    this.#options = options;
  }

  get mode(): ClaimBufferMode {
    return this.#mode;
  }

  /** Claims held and not in flight: ready, set aside, or being renewed. */
  get held(): number {
    return this.#ready.length + this.#stale.length + (this.#renewing?.size ?? 0);
  }

  /** Claims handed out by take() and not yet handled(): sending, or recording. */
  get handedOut(): number {
    return this.#ledger.count.sending + this.#ledger.count.recording;
  }

  /** Requests in flight: claims handed out whose request has not ended (the one such count). */
  get inFlight(): number {
    return this.#ledger.count.sending;
  }

  /**
   * Every delivery this buffer holds a claim on, or handed out and not yet handled (in flight,
   * or its result on its way): its own claims never take these over.
   */
  holding(): Set<number> {
    return this.#ledger.ids();
  }

  /** The request of a claim take() handed out is over: its result is on its way. */
  requestEnded(id: number): void {
    this.#ledger.move(id, "sending", "recording");
  }

  /** A claim whose request ended is over: its result is written, or it was given back. */
  handled(id: number): void {
    this.#ledger.move(id, "recording", null);
  }

  start(): void {
    this.#setModeAccepting();
  }

  /**
   * Claims up to `limit` more (the claim feed decides how many, claim-room.ts); returns how many
   * came. Claimed while draining or stopped, they are given back at once.
   */
  async topUp(limit: number): Promise<number> {
    if (limit <= 0) return 0;
    const { freshness } = this.#options;
    const t = freshness?.now() ?? 0;
    const answered = await this.#options.claim(limit);
    // A claim on a delivery already held (the store leased one the claim was told about) is
    // given back alone: the batch is committed, and refusing it whole would leave its leases to
    // run out on a worker that forgot them.
    const claims: Claim[] = [];
    const conflicting: Claim[] = [];
    for (const each of answered) {
      const at = this.#ledger.placeOf(each.delivery.id);
      if (at === null) claims.push(each);
      else {
        conflicting.push(each);
        this.#options.onConflict(each, at);
      }
    }
    if (conflicting.length > 0) await this.#options.release(conflicting);
    if (claims.length > 0) {
      for (const each of claims) this.#ledger.move(each.delivery.id, null, "ready");
      freshness?.remember(claims, t);
      this.#options.onClaimed(claims);
      if (this.#mode === "DRAINING" || this.#mode === "STOPPED") await this.#giveBack(claims);
      else this.#ready.push(...claims);
      this.#assertHeld();
    }
    return claims.length;
  }

  /** Up to `count` claims that may start now, in order. */
  take(count: number): readonly Claim[] {
    if (this.#mode !== "ACCEPTING" && this.#mode !== "RECHECKING") return NONE;
    if (this.#options.gate.closed()) {
      // A renewal under way settles first; the gate is entered from ACCEPTING.
      if (this.#mode === "ACCEPTING") this.#setModeGated();
      return NONE;
    }
    if (count <= 0 || this.#ready.length === 0) return NONE;
    const taken: Claim[] = [];
    const { freshness } = this.#options;
    const t = freshness?.now() ?? 0;
    while (taken.length < count && this.#ready.length > 0) {
      const claim = this.#ready.shift() as Claim;
      const renewed = this.#renewed.size > 0 && this.#renewed.delete(claim);
      const prepared = renewed || !freshness ? claim : freshness.prepare(claim, t);
      if (prepared !== null) {
        this.#ledger.move(claim.delivery.id, "ready", "sending");
        taken.push(prepared);
        continue;
      }
      // First in, first out: when the head needs a renewal, the claims taken with it soon will
      // too. All go in one renewal now, long before their leases run out.
      this.#ledger.move(claim.delivery.id, "ready", "stale");
      this.#stale.push(claim);
      this.#setAsideStale(t);
    }
    if (this.#renewed.size > 0) this.#renewed.clear();
    this.#assertHeld();
    if (this.#mode === "ACCEPTING" && this.#stale.length > 0) this.#setModeRechecking();
    return taken;
  }

  /** Gives back every claim held, now and when a renewal under way settles. */
  async drain(): Promise<void> {
    if (this.#mode === "STOPPED") return;
    this.#setModeDraining();
    this.#renewed.clear();
    await this.#giveBack([...this.#ready.splice(0), ...this.#stale.splice(0)]);
    while (this.#renewing !== null) await this.#renewing.settled;
    this.#setModeStopped();
  }

  #assertMode(from: ClaimBufferMode[], to: ClaimBufferMode): void {
    if (!from.includes(this.#mode)) {
      throw new Error(`Claim buffer: cannot enter ${to} from ${this.#mode}`);
    }
    this.#assertHeld();
  }

  /**
   * The ledger agrees with the lists (each delivery in the place it is listed in, so the lists
   * are disjoint), and the claims just renewed are ready ones.
   */
  #assertHeld(): void {
    const { count } = this.#ledger;
    const renewing = this.#renewing?.claims.length ?? 0;
    if (
      count.ready !== this.#ready.length ||
      count.stale !== this.#stale.length ||
      count.renewing !== renewing ||
      this.#renewed.size > this.#ready.length
    ) {
      throw new Error(
        `Claim buffer: holds ${this.#ready.length} ready, ${this.#stale.length} set aside, ${renewing} renewing (${this.#renewed.size} renewed), its ledger ${count.ready}, ${count.stale}, ${count.renewing}`,
      );
    }
  }

  /** Gives back claims held here (ready, set aside or renewed): never one it does not hold. */
  #giveBack(claims: Claim[]): Promise<void> {
    for (const each of claims) this.#ledger.move(each.delivery.id, "held", null);
    return this.#options.release(claims);
  }

  #setModeAccepting(): void {
    this.#assertMode(["STOPPED", "RECHECKING", "GATED"], "ACCEPTING");
    if (this.#renewing !== null) throw new Error("Claim buffer: cannot accept during a renewal");
    this.#mode = "ACCEPTING";
  }

  #setModeRechecking(): void {
    this.#assertMode(["ACCEPTING"], "RECHECKING");
    this.#mode = "RECHECKING";
    const batch = this.#stale.splice(0);
    for (const each of batch) this.#ledger.move(each.delivery.id, "stale", "renewing");
    const settled = this.#renew(batch).finally(() => {
      this.#renewing = null;
      if (this.#mode !== "RECHECKING") return;
      this.#setModeAccepting();
      // Claims set aside during this renewal are renewed now: take() starts a renewal only from
      // a ready claim, so with none ready they would wait in `stale` until their leases ran out.
      if (this.#stale.length > 0) this.#setModeRechecking();
      this.#options.onReady();
    });
    this.#renewing = { claims: batch, size: batch.length, settled };
  }

  #setModeGated(): void {
    this.#assertMode(["ACCEPTING"], "GATED");
    this.#mode = "GATED";
    // A renewal's values are fresh only now: after an outage of any length, the claims it
    // renewed are checked (and renewed) again before they start.
    this.#renewed.clear();
    this.#assertHeld();
    this.#gateWait = new AbortController();
    void this.#options.gate.opened(this.#gateWait.signal).then(() => {
      if (this.#mode !== "GATED") return;
      this.#setModeAccepting();
      this.#options.onReady();
    });
  }

  #setModeDraining(): void {
    this.#assertMode(["ACCEPTING", "RECHECKING", "GATED"], "DRAINING");
    this.#mode = "DRAINING";
    this.#gateWait.abort();
  }

  #setModeStopped(): void {
    this.#assertMode(["DRAINING"], "STOPPED");
    if (this.held > 0 || this.#ledger.count.renewing > 0)
      throw new Error("Claim buffer: cannot stop while holding claims");
    this.#mode = "STOPPED";
  }

  async #renew(batch: Claim[]): Promise<void> {
    const { freshness } = this.#options;
    const t = freshness?.now() ?? 0;
    let keep: Claim[];
    try {
      keep = this.#options.renew ? await this.#options.renew(batch) : batch;
    } catch (error) {
      this.#options.onRenewError(error, batch);
      // Given back, not left to their leases: a passing failure (a deadlock, a dropped
      // connection) would otherwise hold them a whole lease. If the store is down, the release
      // fails too and the leases run out as before.
      this.#leftRenewal();
      await this.#giveBack(batch);
      return;
    }
    freshness?.remember(keep, t);
    this.#options.onWithdrawn(batch.length - keep.length);
    // Every claim of the batch leaves the renewal: those kept are ready again, the others are
    // no longer this worker's (a renewal never answers with a claim it was not asked about).
    const kept = new Set<number>();
    for (const each of keep) {
      this.#ledger.move(each.delivery.id, "renewing", "ready");
      kept.add(each.delivery.id);
    }
    for (const each of batch) {
      if (!kept.has(each.delivery.id)) this.#ledger.move(each.delivery.id, "renewing", null);
    }
    this.#leftRenewal();
    if (this.#mode === "DRAINING") {
      await this.#giveBack(keep);
      return;
    }
    // Those that can start at once do so as renewed; the others are judged again when their turn
    // comes (renewed again if need be), so a wait in the buffer never outlives a lease.
    const free = Math.max(0, this.#options.concurrency - this.inFlight);
    for (const claim of keep.slice(0, free)) this.#renewed.add(claim);
    this.#ready.unshift(...keep);
  }

  /**
   * The renewal's claims have left it (its end is still to run): the ledger's moves are done,
   * while `held` counts the whole batch until the renewal ends, so the room to claim stays as
   * small as before until then.
   */
  #leftRenewal(): void {
    if (this.#renewing !== null) this.#renewing = { ...this.#renewing, claims: [] };
  }

  /** Moves the ready claims that may not start as held to `stale`, keeping the order. */
  #setAsideStale(t: number): void {
    const { freshness } = this.#options;
    if (!freshness) return;
    let kept = 0;
    for (const claim of this.#ready) {
      if (this.#renewed.has(claim) || freshness.prepare(claim, t) !== null)
        this.#ready[kept++] = claim;
      else {
        this.#ledger.move(claim.delivery.id, "ready", "stale");
        this.#stale.push(claim);
      }
    }
    this.#ready.length = kept;
  }
}
