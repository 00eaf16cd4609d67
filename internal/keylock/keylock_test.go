package keylock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestLockExcludesAndForgets(t *testing.T) {
	var m Map
	var mu sync.Mutex
	inside := map[string]int{}
	var wg sync.WaitGroup
	for i := range 200 {
		key := fmt.Sprintf("k%d", i%7)
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock := m.Lock(key)
			mu.Lock()
			inside[key]++
			if inside[key] != 1 {
				t.Errorf("%s held twice", key)
			}
			mu.Unlock()
			time.Sleep(50 * time.Microsecond)
			mu.Lock()
			inside[key]--
			mu.Unlock()
			unlock()
		}()
	}
	wg.Wait()
	if n := m.Len(); n != 0 {
		t.Fatalf("%d locks left after every holder unlocked", n)
	}
}

func TestLockContextGivesUp(t *testing.T) {
	var m Map
	unlock := m.Lock("a")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.LockContext(ctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LockContext on a held key = %v", err)
	}
	if m.Len() != 1 {
		t.Fatalf("Len = %d while one holds the key", m.Len())
	}
	// Another key does not wait.
	u2, err := m.LockContext(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	u2()
	unlock()
	if m.Len() != 0 {
		t.Fatalf("Len = %d after unlocking", m.Len())
	}
	u3, err := m.LockContext(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	u3()
}
