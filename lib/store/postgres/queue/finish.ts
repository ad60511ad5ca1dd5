import type { SQL } from "bun";
import { failingEvent } from "../../../webhooks/events/failing-notices.ts";
import { exhaustedEvent } from "../../../webhooks/events/operational-events.ts";
import type { AttemptRecord, Claim, Outcome } from "../../../webhooks/model.ts";
import type { FinishItem } from "../../../webhooks/ports.ts";
import { CHANGE_CHANNEL } from "../changes.ts";
import type { StoreClock } from "../clock.ts";
import { type Db, toNumber } from "../db.ts";
import { type Persistence, persistently } from "./persist.ts";
import type { Int8 } from "./rows.ts";

/**
 * Text as PostgreSQL can store it: TEXT cannot hold U+0000 (a binary response body may), nor can
 * a lone surrogate be encoded; both become U+FFFD instead of failing the whole write.
 */
export function storableText(text: string | null): string | null {
  return text === null ? null : text.toWellFormed().replaceAll("\u0000", "\uFFFD");
}

function notify(sql: SQL) {
  return sql`SELECT pg_notify(${CHANGE_CHANNEL}, '')`;
}

/**
 * Records the attempts and applies the outcomes of several claims in one statement (each only
 * while its claim stands), with the events they cause: delivery.exhausted, and the failing notice.
 */
async function writeResults(
  db: Db,
  clock: StoreClock,
  items: readonly FinishItem[],
): Promise<boolean[]> {
  // A retry's time goes as a distance from now, measured on the clock that chose it, and is
  // placed on the database's clock in the statement.
  const decidedAt = clock.callerNow();
  const input = items.map(({ claim, record, outcome }) => ({
    id: claim.delivery.id,
    message_id: claim.delivery.messageId,
    attempt: claim.attempt,
    generation: claim.generation,
    state: outcome.state,
    next_in: outcome.state === "queued" ? outcome.nextAttemptAt - decidedAt : null,
    status: record.statusCode,
    error: storableText(record.error),
    worker_id: claim.workerId,
    started_at: record.startedAt,
    duration_ms: record.durationMs,
    outcome: record.outcome,
    response_headers: storableText(record.responseHeaders),
    response_body: storableText(record.responseBody),
    url: storableText(record.url ?? null),
    webhook_id: claim.delivery.webhookId,
    // A delivery whose attempts ran out: its delivery.exhausted, recorded below if subscribed.
    exhausted: exhaustedEvent({ claim, record, outcome })?.data ?? null,
    // Its webhook.failing, recorded below when no notice of the webhook is open.
    failing: failingEvent({ claim, record, outcome })?.data ?? null,
  }));
  // A test clock is read at the decision too, so the distance is kept exactly.
  const at = clock.param(decidedAt);
  // A NOTIFY for each delivery queued for a retry, so idle workers recompute their wait, and
  // for each ordered one: its end lets the next change of its object go.
  const rows = await db.sql<Array<{ id: Int8 }>>`
    WITH clock AS (
      SELECT coalesce(${at}::bigint, (extract(epoch from now()) * 1000)::bigint) AS t
    ), input AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(input)}::text::jsonb) AS f(
        id bigint, message_id text, attempt int, generation int, state text, next_in bigint, status int,
        error text, worker_id text, started_at bigint, duration_ms float8, outcome text,
        response_headers text, response_body text, url text, webhook_id bigint, exhausted text,
        failing text)
    ), updated AS (
      UPDATE deliveries d SET state = f.state,
        next_attempt_at = coalesce((SELECT t FROM clock) + f.next_in, d.next_attempt_at),
        lease_owner = NULL, lease_expires_at = NULL,
        last_status = f.status, last_error = f.error, updated_at = (SELECT t FROM clock),
        completed_at = CASE WHEN f.state = 'queued' THEN NULL ELSE (SELECT t FROM clock) END
      FROM input f
      WHERE d.id = f.id AND d.message_id = f.message_id AND d.state = 'delivering'
        AND d.lease_owner = f.worker_id AND d.claim_generation = f.generation
      RETURNING d.id, d.ordered
    ), recorded AS (
      INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
        status_code, outcome, error, response_headers, response_body, url, webhook_id)
      SELECT f.id, f.attempt, f.worker_id, f.started_at, f.duration_ms, f.status, f.outcome,
        f.error, f.response_headers, f.response_body, f.url, f.webhook_id
      FROM input f JOIN updated u ON u.id = f.id
      RETURNING delivery_id
    ), announced AS (
      INSERT INTO operational_events (event, not_for, data, created_at)
      SELECT 'delivery.exhausted', f.webhook_id, f.exhausted, (SELECT t FROM clock)
      FROM input f JOIN updated u ON u.id = f.id
      WHERE f.exhausted IS NOT NULL AND EXISTS (SELECT 1 FROM webhooks w
        WHERE w.enabled AND w.id <> f.webhook_id AND w.events ? 'delivery.exhausted')
    ), runs AS (
      -- The failing notice (failing-notices.ts), per webhook of the batch: a success in it
      -- ends an open notice (webhook.recovered); else its first webhook.failing opens one.
      SELECT f.webhook_id, bool_or(f.state = 'successful') AS ok,
        (array_agg(f.failing ORDER BY f.id) FILTER (WHERE f.failing IS NOT NULL))[1] AS failing,
        (array_agg(f.id ORDER BY f.id) FILTER (WHERE f.state = 'successful'))[1] AS ok_id,
        (array_agg(f.message_id ORDER BY f.id) FILTER (WHERE f.state = 'successful'))[1]
          AS ok_message
      FROM input f JOIN updated u ON u.id = f.id
      GROUP BY f.webhook_id
    ), locked AS (
      -- The webhooks whose notice changes, locked in id order as a claim's send slots lock
      -- theirs (claim.ts): an UPDATE's own order is its plan's (a scan of the table, in the
      -- order its rows were last written), and the two would deadlock. Read once locked.
      SELECT w.id, w.failing_noticed_at, r.ok, r.failing, r.ok_id, r.ok_message
      FROM webhooks w JOIN runs r ON r.webhook_id = w.id
      WHERE CASE WHEN r.ok THEN w.failing_noticed_at IS NOT NULL
        ELSE r.failing IS NOT NULL AND w.failing_noticed_at IS NULL END
      ORDER BY w.id
      FOR UPDATE OF w
    ), noticed AS (
      UPDATE webhooks w SET
        failing_noticed_at = CASE WHEN l.ok THEN NULL ELSE (SELECT t FROM clock) END,
        failing_recovered_at = CASE WHEN l.ok THEN (SELECT t FROM clock)
          ELSE w.failing_recovered_at END
      FROM locked l
      WHERE w.id = l.id
      RETURNING w.id, w.name, l.ok, l.failing, l.ok_id, l.ok_message,
        l.failing_noticed_at AS noticed_at
    ), notices AS (
      INSERT INTO operational_events (event, not_for, data, created_at)
      SELECT n.event, n.id, n.data, (SELECT t FROM clock)
      FROM (
        SELECT id, CASE WHEN ok THEN 'webhook.recovered' ELSE 'webhook.failing' END AS event,
          CASE WHEN ok THEN jsonb_build_object('id', id, 'name', name,
            'failing_noticed_at', to_char(to_timestamp(noticed_at / 1000.0) AT TIME ZONE 'UTC',
              'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'delivery_id', ok_id, 'message_id', ok_message)::text
          ELSE failing END AS data
        FROM noticed) n
      WHERE EXISTS (SELECT 1 FROM webhooks w
        WHERE w.enabled AND w.id <> n.id AND w.events ? n.event)
    )
    SELECT r.delivery_id AS id,
      CASE WHEN f.state = 'queued' OR u.ordered THEN pg_notify(${CHANGE_CHANNEL}, '') END
        AS notified
    FROM recorded r JOIN input f ON f.id = r.delivery_id JOIN updated u ON u.id = r.delivery_id`;
  const applied = new Set(rows.map((row) => toNumber(row.id)));
  return items.map((item) => applied.has(item.claim.delivery.id));
}

/**
 * Ending claims: results (attempt recorded, outcome applied) in one statement per batch, and
 * claims given back unattempted. Both apply only while the claim stands: the delivery (by id
 * and message id) still leased to the claim's worker under its generation (fencing by the claim, not the clock).
 * Results are not retried here: the worker's loop is the one layer that retries them
 * (abortable, resumed when the database answers), and a retry is safe: a result whose write
 * committed but whose answer was lost is recognised by its attempt row. Releases retry
 * through a lost connection as `persistence` says.
 */
export function createFinish(db: Db, options: { clock: StoreClock; persistence: Persistence }) {
  const { clock, persistence } = options;

  /** Results whose write failed: a later try may find it committed after all (its answer lost). */
  const unsure = new Set<string>();
  const claimKey = (claim: Claim) => `${claim.delivery.id}:${claim.generation}`;

  /**
   * Records the attempts and applies the outcomes of several claims in one statement; each
   * applies only while its claim stands, independently of the others.
   */
  async function finishMany(items: readonly FinishItem[]): Promise<boolean[]> {
    if (items.length === 0) return [];
    let applied: boolean[];
    try {
      applied = await writeResults(db, clock, items);
    } catch (error) {
      // Bounded: results never tried again (a hard stop) are forgotten eventually.
      if (unsure.size > 100_000) unsure.clear();
      for (const item of items) unsure.add(claimKey(item.claim));
      throw error;
    }
    const retried = items.filter((item, i) => !applied[i] && unsure.has(claimKey(item.claim)));
    const earlier = retried.length > 0 ? await committedEarlier(retried) : new Set<number>();
    for (const item of items) unsure.delete(claimKey(item.claim));
    return items.map((item, i) => applied[i] === true || earlier.has(item.claim.delivery.id));
  }

  /** The deliveries among `items` whose attempt an earlier try recorded. */
  async function committedEarlier(items: readonly FinishItem[]): Promise<Set<number>> {
    const mine = await db.sql<Array<{ id: Int8 }>>`
      SELECT a.delivery_id AS id FROM attempts a
      JOIN unnest(${items.map((item) => item.claim.delivery.id)}::bigint[],
                  ${items.map((item) => item.claim.attempt)}::int[],
                  ${items.map((item) => item.claim.workerId)}::text[]) AS c(id, attempt, worker)
        ON a.delivery_id = c.id AND a.attempt = c.attempt AND a.worker_id = c.worker
      WHERE a.outcome <> 'lease_expired'`;
    return new Set(mine.map((row) => toNumber(row.id)));
  }

  async function finish(claim: Claim, record: AttemptRecord, outcome: Outcome): Promise<boolean> {
    const [applied] = await finishMany([{ claim, record, outcome }]);
    return applied ?? false;
  }

  async function release(claims: Claim[]): Promise<void> {
    if (claims.length === 0) return;
    await persistently(db, persistence, () =>
      db.atomic(async (sql) => {
        const result = await sql`
          UPDATE deliveries d SET state = 'queued', attempts = d.attempts - 1,
            lease_owner = NULL, lease_expires_at = NULL,
            updated_at = coalesce(${clock.param()}::bigint, (extract(epoch from now()) * 1000)::bigint)
          FROM unnest(${claims.map((c) => c.delivery.id)}::bigint[],
                      ${claims.map((c) => c.delivery.messageId)}::text[],
                      ${claims.map((c) => c.workerId)}::text[],
                      ${claims.map((c) => c.generation)}::int[])
            AS c(id, message_id, worker, generation)
          WHERE d.id = c.id AND d.message_id = c.message_id AND d.state = 'delivering'
            AND d.lease_owner = c.worker AND d.claim_generation = c.generation`;
        if (result.count > 0) await notify(sql);
      }),
    );
  }

  return { finish, finishMany, release };
}
