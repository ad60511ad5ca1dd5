import type { Database } from "bun:sqlite";
import { refuseNewerSchema } from "../../schema-version.ts";
import { MIGRATIONS } from "./migrations.ts";

/**
 * Applies pending migrations, each in its own immediate transaction (safe with several
 * processes). Foreign keys are off meanwhile (the pragma is ignored inside a transaction), so a
 * migration may rebuild a parent table without its DROP cascading to the children; each
 * migration's result is checked with foreign_key_check before it commits. A database migrated
 * past this release's last migration is refused (SchemaTooNewError), never used.
 */
export function migrate(db: Database): number {
  const { user_version: at } = db.query("PRAGMA user_version").get() as { user_version: number };
  refuseNewerSchema(at, MIGRATIONS.length);
  if (at === MIGRATIONS.length) return MIGRATIONS.length;
  const { foreign_keys: enforced } = db.query("PRAGMA foreign_keys").get() as {
    foreign_keys: number;
  };
  db.run("PRAGMA foreign_keys = OFF");
  try {
    applyPending(db);
  } finally {
    if (enforced) db.run("PRAGMA foreign_keys = ON");
  }
  return MIGRATIONS.length;
}

function applyPending(db: Database): void {
  for (;;) {
    const applied = db.transaction(() => {
      const { user_version: version } = db.query("PRAGMA user_version").get() as {
        user_version: number;
      };
      const next = MIGRATIONS[version];
      if (next === undefined) return false;
      db.run(next);
      const broken = db.query("PRAGMA foreign_key_check").get();
      if (broken)
        throw new Error(`Migration ${version + 1} broke a reference: ${JSON.stringify(broken)}`);
      db.run(`PRAGMA user_version = ${version + 1}`);
      return true;
    });
    if (!applied.immediate()) break;
  }
}
