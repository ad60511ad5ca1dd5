/** Templates that cost far more than their fuel says (issue 20), for tests and benches. */

/** In process it ran 83 s here before running out of fuel: each step copies 10 MB. */
export const LOOP_BOMB =
  '{% set s = "x" * 1000000 %}{% for i in range(100000) %}{% set t = s * 10 %}{% endfor %}ok';

/** In process, before the engine's memory cap: 31 s and 2 GB. */
export const STRING_BOMB = '{{ ("x" * 1000000000)|length }}';

/**
 * How a render stopped at its deadline reads: 100 ms of CPU, or its wall-clock ceiling when the
 * machine was busy (200 ms for a change, 2,000 ms for what a person typed).
 */
export const STOPPED =
  /rendering took longer than (?:100 ms|\d+ ms \(the machine was busy\)) and was stopped/;
