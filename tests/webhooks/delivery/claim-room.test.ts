import { describe, expect, test } from "bun:test";
import { claimRoom, claimRoomRule } from "../../../lib/webhooks/delivery/claim-room.ts";

describe("claimRoomRule()", () => {
  const cases: Array<[string, number, number, ReturnType<typeof claimRoomRule>]> = [
    [
      "with a prefetch: topped up once half of it is gone, any room worth a claim",
      2,
      4,
      { capacity: 6, lowWater: 2, minClaim: 1 },
    ],
    [
      "the worker's default (four times 64)",
      64,
      256,
      { capacity: 320, lowWater: 128, minClaim: 1 },
    ],
    [
      "no prefetch: a quarter of the slots at a time",
      8,
      0,
      { capacity: 8, lowWater: 0, minClaim: 2 },
    ],
    ["no prefetch, few slots: one at a time", 3, 0, { capacity: 3, lowWater: 0, minClaim: 1 }],
  ];
  for (const [name, concurrency, prefetch, rule] of cases) {
    test(name, () => expect(claimRoomRule(concurrency, prefetch)).toEqual(rule));
  }
});

describe("claimRoom()", () => {
  const prefetched = claimRoomRule(2, 4);
  const chunked = claimRoomRule(8, 0);
  const cases: Array<[string, ReturnType<typeof claimRoomRule>, [number, number, number], number]> =
    [
      ["empty: room for slots and prefetch", prefetched, [0, 0, 0], 6],
      ["more than half the prefetch held: none", prefetched, [0, 3, 0], 0],
      ["half the prefetch held: the rest, counting requests in flight", prefetched, [2, 2, 0], 2],
      ["every slot busy, nothing held: the prefetch", prefetched, [2, 0, 0], 4],
      ["a result waiting to be written: none, whatever is free", prefetched, [0, 0, 1], 0],
      ["no prefetch, one slot free: one (below a chunk)", chunked, [7, 0, 0], 1],
      ["no prefetch, a quarter free: a chunk", chunked, [6, 0, 0], 2],
      ["no prefetch, a claim set aside for renewal: none", chunked, [6, 1, 0], 0],
    ];
  for (const [name, rule, [inFlight, held, resultsWaiting], room] of cases) {
    test(name, () => expect(claimRoom(rule, { inFlight, held, resultsWaiting })).toBe(room));
  }
});
