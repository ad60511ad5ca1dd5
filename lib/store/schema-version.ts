/**
 * A database migrated by a newer release than this one: opening it would read and write tables
 * whose shape this code does not know (an upgrade rolled back without restoring the backup).
 */
export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `its schema is version ${found}, newer than this release knows (${known}): run the release that migrated it, or restore the backup taken before the upgrade`,
    );
    this.name = "SchemaTooNewError";
  }
}

/** Throws SchemaTooNewError when `found` is past the last migration this release has. */
export function refuseNewerSchema(found: number, known: number): void {
  if (found > known) throw new SchemaTooNewError(found, known);
}
