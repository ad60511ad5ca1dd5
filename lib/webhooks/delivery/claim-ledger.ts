/**
 * Where each claim a worker holds is, by delivery id, for the claim buffer (claim-buffer.ts):
 * every move names the place it comes from and is refused otherwise, so a delivery is never in
 * two places, a claim never arrives for a delivery already held, and nothing is given back or
 * handled that was not held or handed out. A claim handed out is "sending" until its request
 * ends, then "recording" until it is handled (its result written, or it given back): the count
 * of "sending" is the worker's one count of requests in flight.
 */
export type ClaimPlace = "ready" | "stale" | "renewing" | "sending" | "recording";

/** Where a move may come from: a place, any place not handed out ("held"), or nowhere (null). */
type From = ClaimPlace | "held" | null;

export class ClaimLedger {
  readonly #places = new Map<number, ClaimPlace>();
  /** How many claims are in each place, kept with every move. */
  readonly count: Record<ClaimPlace, number> = {
    ready: 0,
    stale: 0,
    renewing: 0,
    sending: 0,
    recording: 0,
  };

  /** Moves delivery `id` from `from` to `to` (null: it arrives, or leaves the worker). */
  move(id: number, from: From, to: ClaimPlace | null): void {
    const at = this.#places.get(id) ?? null;
    const allowed =
      from === "held" ? at !== null && at !== "sending" && at !== "recording" : at === from;
    if (!allowed) {
      throw new Error(
        `Claim ledger: delivery ${id} cannot move from ${from ?? "nowhere"} to ${to ?? "nowhere"}: it is ${at ?? "not held"}`,
      );
    }
    if (at !== null) this.count[at]--;
    if (to === null) this.#places.delete(id);
    else {
      this.#places.set(id, to);
      this.count[to]++;
    }
  }

  /** The place of delivery `id`, or null when it is not held. */
  placeOf(id: number): ClaimPlace | null {
    return this.#places.get(id) ?? null;
  }

  /** Every delivery held or handed out. */
  ids(): Set<number> {
    return new Set(this.#places.keys());
  }
}
