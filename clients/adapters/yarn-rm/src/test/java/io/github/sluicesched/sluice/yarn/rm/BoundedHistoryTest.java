package io.github.sluicesched.sluice.yarn.rm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class BoundedHistoryTest {
  @Test
  void keepsTheLastItemsOldestFirst() {
    BoundedHistory<Integer> h = new BoundedHistory<>(3);
    assertEquals(List.of(), h.snapshot());
    h.add(1);
    h.add(2);
    assertEquals(List.of(1, 2), h.snapshot());
    h.add(3);
    h.add(4);
    h.add(5);
    assertEquals(List.of(3, 4, 5), h.snapshot());
  }

  @Test
  void snapshotsDoNotChangeLater() {
    BoundedHistory<String> h = new BoundedHistory<>(2);
    h.add("a");
    List<String> s = h.snapshot();
    h.add("b");
    h.add("c");
    assertEquals(List.of("a"), s);
  }

  @Test
  void refusesAnEmptyCapacity() {
    assertThrows(IllegalArgumentException.class, () -> new BoundedHistory<>(0));
  }
}
