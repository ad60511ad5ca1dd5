/**
 * Dates as a reader sees them, in the time zone the digest runs in (the process's, unless a
 * test names one): "Wednesday 25 November 2026, 14:53 UTC" in headers and titles, and the
 * local calendar day "2026-11-25" that names an archive page.
 */

export interface DateOptions {
  /** An IANA zone such as "Europe/Paris"; the process's own when unset. */
  timeZone?: string;
  /**
   * The language dates are written in (--language, BCP 47); English as below when unset or "en".
   * Only humanDateTime follows it: a page's date line; the archive's labels stay English.
   */
  locale?: string;
}

// Building a formatter costs about 30 µs; the archive index formats thousands of days.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(format: Intl.DateTimeFormatOptions, timeZone: string | undefined) {
  const key = `${timeZone ?? ""} ${JSON.stringify(format)}`;
  let found = formatters.get(key);
  if (!found) {
    found = new Intl.DateTimeFormat("en-GB", { ...format, timeZone });
    formatters.set(key, found);
  }
  return found;
}

function localeFormatter(locale: string, timeZone: string | undefined): Intl.DateTimeFormat {
  const key = `${locale} ${timeZone ?? ""}`;
  let found = formatters.get(key);
  if (!found) {
    found = new Intl.DateTimeFormat(locale, {
      weekday: "long",
      day: "numeric",
      month: "long",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
      timeZone,
    });
    formatters.set(key, found);
  }
  return found;
}

function parts(ms: number, format: Intl.DateTimeFormatOptions, options: DateOptions) {
  const byType = new Map<string, string>();
  for (const part of formatter(format, options.timeZone).formatToParts(new Date(ms))) {
    byType.set(part.type, part.value);
  }
  return (type: Intl.DateTimeFormatPartTypes) => byType.get(type) ?? "";
}

/**
 * "Wednesday 25 November 2026, 14:53 UTC" (24-hour clock, the zone's short name); in another
 * language as Intl writes it there: "Mittwoch, 25. November 2026 um 14:53 UTC".
 */
export function humanDateTime(ms: number, options: DateOptions = {}): string {
  if (options.locale !== undefined && options.locale !== "en") {
    return localeFormatter(options.locale, options.timeZone).format(new Date(ms));
  }
  const part = parts(
    ms,
    {
      weekday: "long",
      day: "numeric",
      month: "long",
      year: "numeric",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    },
    options,
  );
  return `${part("weekday")} ${part("day")} ${part("month")} ${part("year")}, ${part("hour")}:${part("minute")} ${part("timeZoneName")}`;
}

/** The calendar day in the zone, "2026-11-25": an archive page's name. */
export function localDateKey(ms: number, options: DateOptions = {}): string {
  const part = parts(ms, { year: "numeric", month: "2-digit", day: "2-digit" }, options);
  return `${part("year")}-${part("month")}-${part("day")}`;
}

const DATE_KEY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for "2026-11-25", a real calendar day. */
export function isDateKey(key: string): boolean {
  const match = DATE_KEY.exec(key);
  if (!match) return false;
  const date = new Date(`${key}T12:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(key);
}

/** "Wednesday 25 November 2026" for the day "2026-11-25" (a calendar day has no zone). */
export function dayLabel(key: string): string {
  const part = parts(
    Date.parse(`${key}T12:00:00Z`),
    { weekday: "long", day: "numeric", month: "long", year: "numeric" },
    { timeZone: "UTC" },
  );
  return `${part("weekday")} ${part("day")} ${part("month")} ${part("year")}`;
}

/** "November 2026" for the day "2026-11-25". */
export function monthLabel(key: string): string {
  const part = parts(
    Date.parse(`${key}T12:00:00Z`),
    { month: "long", year: "numeric" },
    { timeZone: "UTC" },
  );
  return `${part("month")} ${part("year")}`;
}

/** The day `days` before "2026-11-25" (or after, when negative). */
export function daysBefore(key: string, days: number): string {
  const date = new Date(Date.parse(`${key}T12:00:00Z`) - days * 86_400_000);
  return date.toISOString().slice(0, 10);
}
