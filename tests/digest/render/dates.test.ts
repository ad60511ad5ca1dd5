import { describe, expect, test } from "bun:test";
import {
  dayLabel,
  daysBefore,
  humanDateTime,
  isDateKey,
  localDateKey,
  monthLabel,
} from "../../../lib/digest/render/dates.ts";
import { ageText, readingTimeText } from "../../../lib/digest/render/facts.ts";

const AT = Date.parse("2026-11-25T14:53:53.147Z");

describe("dates", () => {
  test("humanDateTime() writes the day and time as a reader says them, with the zone", () => {
    expect(humanDateTime(AT, { timeZone: "UTC" })).toBe("Wednesday 25 November 2026, 14:53 UTC");
    expect(humanDateTime(AT, { timeZone: "Europe/Paris" })).toBe(
      "Wednesday 25 November 2026, 15:53 CET",
    );
    expect(humanDateTime(Date.parse("2026-01-04T00:05:00Z"), { timeZone: "UTC" })).toBe(
      "Sunday 4 January 2026, 00:05 UTC",
    );
  });

  test("humanDateTime() writes another language's date as Intl writes it there; en as before", () => {
    expect(humanDateTime(AT, { timeZone: "UTC", locale: "de" })).toBe(
      "Mittwoch, 25. November 2026 um 14:53 UTC",
    );
    expect(humanDateTime(AT, { timeZone: "UTC", locale: "pt-BR" })).toBe(
      "quarta-feira, 25 de novembro de 2026 às 14:53 UTC",
    );
    expect(humanDateTime(AT, { timeZone: "UTC", locale: "en" })).toBe(
      "Wednesday 25 November 2026, 14:53 UTC",
    );
  });

  test("localDateKey() is the calendar day in the zone, which may differ from UTC's", () => {
    const late = Date.parse("2026-11-25T23:30:00Z");
    expect(localDateKey(late, { timeZone: "UTC" })).toBe("2026-11-25");
    expect(localDateKey(late, { timeZone: "Europe/Paris" })).toBe("2026-11-26");
    expect(localDateKey(late, { timeZone: "America/Los_Angeles" })).toBe("2026-11-25");
  });

  test("dayLabel(), isDateKey() and daysBefore() work on calendar days", () => {
    expect(dayLabel("2026-11-25")).toBe("Wednesday 25 November 2026");
    expect(monthLabel("2026-11-25")).toBe("November 2026");
    expect(isDateKey("2026-11-25")).toBe(true);
    expect(isDateKey("2026-02-30")).toBe(false);
    expect(isDateKey("2026-1-5")).toBe(false);
    expect(daysBefore("2026-03-01", 1)).toBe("2026-02-28");
    expect(daysBefore("2026-11-25", 7)).toBe("2026-11-18");
  });
});

describe("facts", () => {
  const now = Date.parse("2026-11-25T12:00:00Z");
  const ago = (minutes: number) => (now - minutes * 60_000) / 1000;

  test("ageText() counts as Hacker News does: minutes, then hours, then days", () => {
    expect(ageText(ago(0), now)).toBe("0 minutes ago");
    expect(ageText(ago(1), now)).toBe("1 minute ago");
    expect(ageText(ago(59), now)).toBe("59 minutes ago");
    expect(ageText(ago(60), now)).toBe("1 hour ago");
    expect(ageText(ago(23 * 60 + 59), now)).toBe("23 hours ago");
    expect(ageText(ago(24 * 60), now)).toBe("1 day ago");
    expect(ageText(ago(47 * 60), now)).toBe("1 day ago");
    expect(ageText(ago(72 * 60), now)).toBe("3 days ago");
    expect(ageText(null, now)).toBeNull();
  });

  test("readingTimeText() rounds to minutes and says nothing for a line or two", () => {
    expect(readingTimeText(1380)).toBe("6 min read");
    expect(readingTimeText(120)).toBe("1 min read");
    expect(readingTimeText(40)).toBeNull();
    expect(readingTimeText(null)).toBeNull();
    expect(readingTimeText(undefined)).toBeNull();
  });
});
