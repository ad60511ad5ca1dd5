import { afterAll, beforeAll } from "bun:test";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import {
  describePostgres,
  type PostgresCluster,
  startPostgresCluster,
} from "../fakes/postgres-cluster.ts";
import { describeStoreContract } from "./contract.ts";

describePostgres("PostgreSQL store", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  // Each test gets a database of its own on the one throwaway cluster.
  describeStoreContract("PostgreSQL", async ({ now, renderTemplates }) => {
    const url = await cluster.createDatabase();
    const store = await openPostgresStore(url, { now, renderTemplates });
    return {
      store,
      openAnother: () => openPostgresStore(url, { now }),
      cleanup: () => store.close(),
    };
  });
});
