import { type ConsolaReporter, createConsola, type LogObject } from "consola";
import type { LogFormat } from "./config/operability.ts";
import { createLogger, type Logger } from "./log.ts";

export interface LineStream {
  write(chunk: string): unknown;
}

/**
 * The project logger in the format LOG_FORMAT asks for: `pretty` is lib/log.ts's consola logger
 * (colours only on a TTY), `json` writes one JSON object per line. Both go to stderr by default.
 */
export function createFormattedLogger(
  config: { format: LogFormat; level: number },
  options: { stream?: NodeJS.WriteStream } = {},
): Logger {
  if (config.format === "json")
    return createJsonLogger({ level: config.level, stream: options.stream });
  return createLogger({ level: config.level, stream: options.stream });
}

/**
 * A consola logger that writes JSON lines: `{"time","level","msg",…fields}`. Fields come from a
 * log object (`logger.warn({ message, deliveryId, … })`, see attempt-log.ts's LogLine).
 */
export function createJsonLogger(
  options: { level?: number; stream?: LineStream; now?: () => Date } = {},
): Logger {
  const stream = options.stream ?? process.stderr;
  const reporter: ConsolaReporter = {
    log(logObj) {
      stream.write(`${jsonLine(logObj, options.now?.() ?? logObj.date)}\n`);
    },
  };
  // throttle 0: consola otherwise folds identical lines within a second into "(repeated n times)".
  return createConsola({ level: options.level ?? 3, reporters: [reporter], throttle: 0 });
}

const LEVEL_NAMES: Record<string, string> = { success: "info", start: "info", log: "info" };

/** One log object as a JSON line. */
function jsonLine(logObj: LogObject, time: Date): string {
  const { date: _date, args, type, level: _level, tag, ...fields } = logObj;
  const errors = args.filter((arg): arg is Error => arg instanceof Error);
  const record: Record<string, unknown> = {
    time: time.toISOString(),
    level: LEVEL_NAMES[type] ?? type,
    msg: args.map(argText).join(" "),
  };
  if (tag) record.tag = tag;
  for (const [key, value] of Object.entries(fields)) {
    if (!(key in record) && typeof value !== "function") record[key] = value;
  }
  if (errors[0]) record.err = { name: errors[0].name, message: errors[0].message };
  return escapeInvisibles(JSON.stringify(record));
}

function argText(arg: unknown): string {
  if (typeof arg === "string") return arg;
  if (arg instanceof Error) return arg.message;
  if (arg === null || typeof arg !== "object") return String(arg);
  try {
    return JSON.stringify(arg);
  } catch {
    return String(arg);
  }
}

// JSON.stringify escapes C0 controls but leaves DEL, C1 controls (the 8-bit CSI among them), line
// separators and bidi overrides raw; escaping them keeps `tail -f` of a log file safe to read.
const INVISIBLE = /[\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

function escapeInvisibles(json: string): string {
  return json.replace(INVISIBLE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
