package io.github.sluicesched.sluice.yarn.rm;

import java.util.ArrayDeque;
import java.util.List;

/**
 * The last {@code capacity} items added, oldest first, for diagnostics and tests: a record of
 * what a long-running ResourceManager did must not grow for its whole life. Safe for concurrent
 * use.
 */
final class BoundedHistory<T> {
  private final int capacity;
  private final ArrayDeque<T> items = new ArrayDeque<>();

  BoundedHistory(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1, got " + capacity);
    }
    this.capacity = capacity;
  }

  /** Adds an item, dropping the oldest one when full. */
  synchronized void add(T item) {
    items.addLast(item);
    if (items.size() > capacity) {
      items.removeFirst();
    }
  }

  /** The items, oldest first, as they are now. */
  synchronized List<T> snapshot() {
    return List.copyOf(items);
  }
}
