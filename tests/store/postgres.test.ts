import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";
import { describeStoreContract } from "./contract.ts";

describePostgres("PostgreSQL store", () => {
  const pg = usePostgresCluster();

  // Each test gets a database of its own on the one throwaway pg.cluster.
  describeStoreContract("PostgreSQL", async ({ now, renderTemplates }) => {
    const url = await pg.cluster.createDatabase();
    const store = await openPostgresStore(url, { now, renderTemplates });
    return {
      store,
      openAnother: () => openPostgresStore(url, { now }),
      cleanup: () => store.close(),
    };
  });
});
