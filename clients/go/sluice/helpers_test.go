package sluice_test

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	"github.com/sluice-sched/sluice/cmd/builtin"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// startServer starts an in-process sluiced and returns its address; it stops with
// the test (stopping it earlier is fine).
func startServer(t *testing.T) (addr string, stop func()) {
	t.Helper()
	addr, stop, err := service.StartInProcess(context.Background(), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr, stop
}

// dial connects in plaintext to addr.
func dial(t *testing.T, addr string, opts ...sluice.Option) *sluice.Client {
	t.Helper()
	c, err := sluice.Dial(addr, append([]sluice.Option{sluice.WithInsecure()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// switchDialer dials whatever address it currently holds, so that a test can move a
// client to a restarted server on another port.
type switchDialer struct{ addr atomic.Value }

func (d *switchDialer) set(addr string) { d.addr.Store(addr) }

func (d *switchDialer) option() sluice.Option {
	return sluice.WithDialOptions(grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		var nd net.Dialer
		return nd.DialContext(ctx, "tcp", d.addr.Load().(string))
	}))
}

// fakeRM is a resource manager's view of its cluster: the objects by key, and the
// snapshot the Syncer asks for.
type fakeRM struct {
	mu        sync.Mutex
	objects   map[string]*sluicev1.Delta
	snapshots int
}

func newFakeRM() *fakeRM { return &fakeRM{objects: map[string]*sluicev1.Delta{}} }

// upsert records d (an upsert) in the RM's state and returns it, to be sent.
func (rm *fakeRM) upsert(d *sluicev1.Delta) *sluicev1.Delta {
	var key string
	switch c := d.GetChange().(type) {
	case *sluicev1.Delta_UpsertNode:
		key = "node/" + c.UpsertNode.GetName()
	case *sluicev1.Delta_UpsertJob:
		key = "job/" + c.UpsertJob.GetName()
	case *sluicev1.Delta_UpsertTask:
		key = "task/" + c.UpsertTask.GetName()
	case *sluicev1.Delta_UpsertQueue:
		key = "queue/" + c.UpsertQueue.GetName()
	default:
		panic(fmt.Sprintf("fakeRM: unsupported delta %T", c))
	}
	rm.mu.Lock()
	rm.objects[key] = d
	rm.mu.Unlock()
	return d
}

// snapshot returns every object: queues, nodes, jobs, then tasks, each by name.
func (rm *fakeRM) snapshot() []*sluicev1.Delta {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.snapshots++
	keys := make([]string, 0, len(rm.objects))
	for k := range rm.objects {
		keys = append(keys, k)
	}
	rank := map[byte]int{'q': 0, 'n': 1, 'j': 2, 't': 3}
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := rank[keys[i][0]], rank[keys[j][0]]; ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	out := make([]*sluicev1.Delta, len(keys))
	for i, k := range keys {
		out[i] = rm.objects[k]
	}
	return out
}

func (rm *fakeRM) snapshotCount() int {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.snapshots
}

func node(name, cpu string) *sluicev1.Delta {
	return sluice.UpsertNode(&sluicev1.Node{Name: name, Allocatable: map[string]string{"cpu": cpu, "memory": "32Gi", "pods": "110"}})
}

func job(name string, minAvailable int32) *sluicev1.Delta {
	return sluice.UpsertJob(&sluicev1.Job{Name: name, MinAvailable: &minAvailable})
}

func task(name, job string) *sluicev1.Delta {
	return sluice.UpsertTask(&sluicev1.Task{Name: name, Job: job, Resources: map[string]string{"cpu": "2", "memory": "1Gi"}})
}

// countNodes lists every node of cluster.
func countNodes(t *testing.T, c *sluice.Client, cluster string) int {
	t.Helper()
	n, token := 0, ""
	for {
		resp, err := c.State.ListNodes(context.Background(), &sluicev1.ListNodesRequest{Cluster: cluster, PageSize: 1000, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		n += len(resp.GetNodes())
		if token = resp.GetNextPageToken(); token == "" {
			return n
		}
	}
}

// runSyncer runs s until the test ends and returns a function that waits for Run
// to return.
func runSyncer(t *testing.T, s *sluice.Syncer) (cancel func()) {
	t.Helper()
	ctx, cancelCtx := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	cancel = func() {
		once.Do(func() {
			cancelCtx()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("Syncer.Run did not return after its context ended")
			}
		})
	}
	t.Cleanup(cancel)
	return cancel
}

func flush(t *testing.T, s *sluice.Syncer) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rev, err := s.Flush(ctx)
	if err != nil {
		t.Fatalf("Flush: %v", err)
	}
	return rev
}

// binds returns "task@node" for every bind decision, sorted.
func binds(ds []*sluicev1.Decision) []string {
	var out []string
	for _, d := range ds {
		if b := d.GetBind(); b != nil {
			out = append(out, sluice.FullName(b.GetTask())+"@"+b.GetNode())
		}
	}
	sort.Strings(out)
	return out
}
