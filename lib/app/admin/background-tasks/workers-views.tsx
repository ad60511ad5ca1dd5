/** @jsxImportSource hono/jsx */
import type { DueSummary } from "../../../webhooks/model.ts";
import { STALE_AFTER_BEATS, type WorkerStatus } from "../../../webhooks/observe/staleness.ts";
import { formatAge } from "../../../webhooks/observe/workers-view.ts";
import { formatTime } from "../format.ts";

export interface WorkersPanelData {
  workers: WorkerStatus[];
  due: DueSummary;
  /** NO_WORKER_WARNING when deliveries are due and no worker is live, else null. */
  warning: string | null;
  heartbeatIntervalMs: number;
  nowMs: number;
}

/**
 * Background Tasks' workers: each worker's heartbeat with its age, live or stale, and the
 * warning NetBox's troubleshooting advice boils down to ("is a worker running?").
 */
export function WorkersPanel(props: { data: WorkersPanelData }) {
  const { data } = props;
  const staleAfter = formatAge(STALE_AFTER_BEATS * data.heartbeatIntervalMs);
  return (
    <section id="workers">
      {data.warning ? (
        <p class="error-box warning" role="alert">
          <strong>
            <InlineCode text={data.warning} />
          </strong>{" "}
          {`(${data.due.count} ${data.due.count === 1 ? "delivery is" : "deliveries are"} due${
            data.due.oldestDueAt === null
              ? ""
              : `, the oldest for ${formatAge(data.nowMs - data.due.oldestDueAt)}`
          }.)`}
        </p>
      ) : null}
      <h2>Workers</h2>
      {data.workers.length === 0 ? (
        <p class="empty">No worker has reported a heartbeat.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Worker</th>
              <th>Host</th>
              <th class="num">PID</th>
              <th>Version</th>
              <th class="num">In flight</th>
              <th>Started</th>
              <th>Last seen</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {data.workers.map((w) => (
              <tr id={`worker-${w.pid}`}>
                <td>
                  <code>{w.id}</code>
                </td>
                <td data-label="Host">{w.host}</td>
                <td class="num" data-label="PID">
                  {w.pid}
                </td>
                <td data-label="Version">{w.version}</td>
                <td class="num" data-label="In flight">
                  {w.inFlight}/{w.concurrency}
                </td>
                <td data-label="Started">
                  {formatTime(w.startedAt)} (up {formatAge(data.nowMs - w.startedAt)})
                </td>
                <td data-label="Last seen">{formatAge(w.ageMs)} ago</td>
                <td data-label="Status">
                  <span class={`badge ${w.stale ? "stale" : "live"}`}>
                    {w.stale ? "stale" : "live"}
                  </span>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted">
        Workers record a heartbeat every {formatAge(data.heartbeatIntervalMs)}; one not seen for{" "}
        {staleAfter} is stale (stopped or stuck). A worker that stops cleanly leaves the list.
      </p>
    </section>
  );
}

/** Text whose `backticked` parts are commands: shown as <code>, without the backticks. */
export function InlineCode(props: { text: string }) {
  return <>{props.text.split("`").map((part, i) => (i % 2 === 1 ? <code>{part}</code> : part))}</>;
}
