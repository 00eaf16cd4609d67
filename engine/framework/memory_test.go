package framework

import (
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/conf"
)

func TestMemoryOutlivesSessionsAndClonesAreIndependent(t *testing.T) {
	mem := NewMemory()
	open := func(m *Memory) *Session {
		s, err := OpenSession(&Snapshot{Cluster: "c"}, &conf.Config{}, NewRegistry(), Options{Memory: m})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	at := time.Unix(100, 0)
	open(mem).SetLastRun("rescheduling", at)
	if got, ok := open(mem).LastRun("rescheduling"); !ok || !got.Equal(at) {
		t.Fatalf("a later session sees %v, %v; want %v", got, ok, at)
	}
	dry := mem.Clone()
	open(dry).SetLastRun("rescheduling", at.Add(time.Hour))
	if got, _ := open(mem).LastRun("rescheduling"); !got.Equal(at) {
		t.Fatalf("a clone's write leaked into the original: %v", got)
	}
	if _, ok := open(nil).LastRun("rescheduling"); ok {
		t.Fatal("a session without memory remembered something")
	}
}
