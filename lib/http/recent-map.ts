/**
 * Sets `key` as the newest entry of `map` (a Map keeps insertion order) and forgets the oldest
 * entries beyond `max`: a bounded memory of the keys most recently set.
 */
export function setNewest<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
}
