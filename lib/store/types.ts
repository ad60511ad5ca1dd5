import type { ItemRepo } from "../inventory/model.ts";
import type { DeliveryQueue, WebhookRepo } from "../webhooks/model.ts";
import type { HealthStore } from "../webhooks/policy/endpoint-health.ts";

export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  version: string;
  startedAt: number;
  lastSeenAt: number;
  inFlight: number;
  concurrency: number;
}

/** Worker heartbeats, so people can see which workers run (issue: operability). */
export interface WorkerRegistry {
  heartbeat(info: WorkerInfo): Promise<void>;
  remove(id: string): Promise<void>;
  list(): Promise<WorkerInfo[]>;
}

/**
 * A webhook's sending health: its failure streak and automatic disabling (lib/ops/endpoint-health.ts)
 * and the 429/503 slow-down.
 */
export interface WebhookHealthRepo extends HealthStore {
  /** No attempt to the webhook before `until`; never shortens a longer pause. True if extended. */
  pause(webhookId: number, until: number): Promise<boolean>;
}

/** The repositories, bound to one connection or one transaction. */
export interface Repos {
  webhooks: WebhookRepo;
  queue: DeliveryQueue;
  items: ItemRepo;
  workers: WorkerRegistry;
  health: WebhookHealthRepo;
}

/**
 * The whole application store (SQLite or PostgreSQL, chosen by DATABASE_URL).
 * `transaction` runs `fn` with repos that join one transaction, so an item change and its
 * deliveries commit together or not at all. `fn` must not do network I/O.
 */
export interface Store extends Repos {
  readonly kind: "sqlite" | "postgres";
  transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T>;
  /**
   * Resolves soon after another connection or process may have enqueued work (SQLite: a
   * `PRAGMA data_version` change; PostgreSQL: NOTIFY), or after `timeoutMs`, or on abort.
   */
  waitForChange(options: { timeoutMs: number; signal?: AbortSignal }): Promise<void>;
  close(): Promise<void>;
}
