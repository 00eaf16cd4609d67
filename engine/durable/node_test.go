package durable

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/internal/testnet"
)

// open opens a node alone on dir over a new store and waits until it leads.
func open(t *testing.T, dir string, tweak func(*Options)) (*state.Store, *Node) {
	t.Helper()
	s := state.New()
	opts := Options{DataDir: dir}
	if tweak != nil {
		tweak(&opts)
	}
	n, err := Open(s, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = n.Close(5 * time.Second) })
	waitFor(t, 10*time.Second, "leadership", func() bool { return n.IsLeader() })
	return s, n
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// nodesBatch upserts nodes n<from>..n<to-1> with 8 CPUs each.
func nodesBatch(from, to int) state.Batch {
	var b state.Batch
	for i := from; i < to; i++ {
		b.Changes = append(b.Changes, state.Change{Node: &api.Node{
			Name: fmt.Sprintf("n%d", i), Allocatable: api.Resource{MilliCPU: 8000, Memory: 1 << 30},
			Labels:  map[string]string{"rack": fmt.Sprint(i % 3)},
			Devices: []api.Device{{ID: "d0", Type: "gpu", Memory: 1 << 30}},
		}})
	}
	return b
}

// jobBatch creates queue q (if needed), a job and its pending tasks.
func jobBatch(name string, tasks int) state.Batch {
	b := state.Batch{Changes: []state.Change{
		{Queue: &api.Queue{Name: "q", Weight: 1, State: api.QueueOpen}},
		{Job: &api.Job{Namespace: "ns", Name: name, Queue: "q", MinAvailable: 1, Phase: api.JobPending,
			CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}},
	}}
	for i := range tasks {
		b.Changes = append(b.Changes, state.Change{Task: &api.Task{Namespace: "ns", Name: fmt.Sprintf("%s-%d", name, i), Job: name,
			Status: api.Pending, Resources: api.Resource{MilliCPU: 1000, Memory: 1 << 20}}})
	}
	return b
}

// image encodes a store's whole state, revisions included.
func image(t *testing.T, s *state.Store) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.Dump().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	// Restore into a fresh store and describe it, so that encodings that differ only in
	// map order compare equal.
	r := state.New()
	if err := r.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, c := range r.Clusters() {
		v := r.Snapshot(c)
		fmt.Fprintf(&out, "cluster %s rev %d\n", c, v.Revision())
		for _, n := range v.Nodes() {
			fmt.Fprintf(&out, "  node %+v\n", *n)
		}
		for _, q := range v.Queues() {
			fmt.Fprintf(&out, "  queue %+v\n", *q)
		}
		for _, j := range v.Jobs() {
			fmt.Fprintf(&out, "  job %+v\n", *j)
		}
		for _, tk := range v.Tasks() {
			fmt.Fprintf(&out, "  task %+v\n", *tk)
		}
	}
	return out.String()
}

func TestRestartKeepsStateAndRevisions(t *testing.T) {
	dir := t.TempDir()
	s, n := open(t, dir, nil)
	for i := range 5 {
		if _, err := s.Apply("c", nodesBatch(i*10, i*10+10)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Apply("c", jobBatch("j", 3)); err != nil {
		t.Fatal(err)
	}
	base := s.Revision("c")
	out, err := s.CommitPlan("c", &state.PlanCommit{BaseRevision: base, Decisions: []state.PlanDecision{
		{Kind: state.Bind, Task: "ns/j-0", Node: "n1", DeviceIDs: []string{"d0"}},
		{Kind: state.Bind, Task: "ns/j-1", Node: "gone"},
	}, Phases: []state.PhaseChange{{Job: "ns/j", Phase: api.JobRunning}}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Revision != base+1 || out.Rejected[0] != "" || !strings.Contains(out.Rejected[1], "node gone no longer exists") {
		t.Fatalf("commit outcome %+v", out)
	}
	if _, err := s.Apply("other", nodesBatch(0, 1)); err != nil {
		t.Fatal(err)
	}
	want := image(t, s)
	wantRev := s.Revision("c")
	id := s.ID()
	if id == "" {
		t.Fatal("a durable store has no id")
	}
	if err := n.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}

	s2, _ := open(t, dir, nil)
	if got := image(t, s2); got != want {
		t.Fatalf("after a restart:\n%s\nwant:\n%s", got, want)
	}
	if s2.ID() != id {
		t.Fatalf("store id %q after a restart, want %q", s2.ID(), id)
	}
	if other, _ := open(t, t.TempDir(), nil); other.ID() == id || other.ID() == "" {
		t.Fatalf("a new data directory has store id %q (the first one's is %q)", other.ID(), id)
	}
	if got := s2.Revision("c"); got != wantRev {
		t.Fatalf("revision %d after a restart, want %d", got, wantRev)
	}
	// The plan's base revision still tells what changed since: j-2 is untouched, j-0 bound.
	out, err = s2.CommitPlan("c", &state.PlanCommit{BaseRevision: base, Decisions: []state.PlanDecision{
		{Kind: state.Bind, Task: "ns/j-0", Node: "n1"}, {Kind: state.Bind, Task: "ns/j-2", Node: "n2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Rejected[0], "changed since") || out.Rejected[1] != "" {
		t.Fatalf("second commit outcome %+v", out)
	}
}

func TestRefusedBatchNeverReachesTheLog(t *testing.T) {
	s, n := open(t, t.TempDir(), nil)
	if _, err := s.Apply("c", nodesBatch(0, 2)); err != nil {
		t.Fatal(err)
	}
	last := n.Status().LastIndex
	rev := s.Revision("c")
	bad := state.Batch{Changes: []state.Change{
		{Node: &api.Node{Name: "n9"}},
		{Task: &api.Task{Namespace: "ns", Name: "t", Job: "missing"}},
	}}
	_, err := s.Apply("c", bad)
	var ve *state.ValidationError
	if !errors.As(err, &ve) || ve.Field != "changes[1].task.job" {
		t.Fatalf("Apply = %v, want a ValidationError on changes[1].task.job", err)
	}
	if got := n.Status().LastIndex; got != last {
		t.Fatalf("log grew from %d to %d for a refused batch", last, got)
	}
	if got := s.Revision("c"); got != rev {
		t.Fatalf("revision %d, want %d", got, rev)
	}
	if _, err := s.Update("c", func(*state.Txn) error { return nil }); !errors.Is(err, state.ErrNotReplicable) {
		t.Fatalf("Update on a replicated store = %v", err)
	}
}

func TestSnapshotsKeepTheLogBounded(t *testing.T) {
	dir := t.TempDir()
	tweak := func(o *Options) {
		o.SnapshotThreshold = 64
		o.SnapshotInterval = 20 * time.Millisecond
		o.TrailingLogs = 32
	}
	s, n := open(t, dir, tweak)
	for i := range 400 {
		if _, err := s.Apply("c", nodesBatch(i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	// At rest the log holds at most the entries since the last snapshot (fewer than the
	// threshold, or another snapshot would be due) and the trailing ones before it.
	waitFor(t, 10*time.Second, "a snapshot and a compacted log", func() bool {
		st := n.Status()
		return st.SnapshotIndex > 300 && st.FirstIndex > 200 && st.LastIndex-st.FirstIndex+1 <= 64+32+1
	})
	want := image(t, s)
	if err := n.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	s2, _ := open(t, dir, tweak)
	if got := image(t, s2); got != want {
		t.Fatalf("restored from snapshot + log:\n%.2000s\nwant:\n%.2000s", got, want)
	}
}

func TestDataDirThatIsAFile(t *testing.T) {
	f := t.TempDir() + "/file"
	if err := writeFile(f); err != nil {
		t.Fatal(err)
	}
	_, err := Open(state.New(), Options{DataDir: f})
	if err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("Open = %v", err)
	}
}

func TestDataDirInUse(t *testing.T) {
	dir := t.TempDir()
	open(t, dir, nil)
	_, err := Open(state.New(), Options{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("Open = %v", err)
	}
}

// faultyLogs fails every append while fail is set, as a full or read-only disk does.
type faultyLogs struct {
	raft.LogStore
	fail *atomic.Bool
}

var errDiskFull = errors.New("write raft.db: no space left on device")

func (f faultyLogs) StoreLog(l *raft.Log) error { return f.StoreLogs([]*raft.Log{l}) }

func (f faultyLogs) StoreLogs(ls []*raft.Log) error {
	if f.fail.Load() {
		return errDiskFull
	}
	return f.LogStore.StoreLogs(ls)
}

func TestStorageFaultsFailWritesCleanly(t *testing.T) {
	dir := t.TempDir()
	var fail atomic.Bool
	tweak := func(o *Options) {
		o.wrapLogs = func(l raft.LogStore) raft.LogStore { return faultyLogs{LogStore: l, fail: &fail} }
	}
	s, n := open(t, dir, tweak)
	if _, err := s.Apply("c", nodesBatch(0, 5)); err != nil {
		t.Fatal(err)
	}
	before := image(t, s)
	rev := s.Revision("c")

	fail.Store(true)
	for i := range 5 {
		_, err := s.Apply("c", nodesBatch(100+i, 101+i))
		if !errors.Is(err, state.ErrUnavailable) {
			t.Fatalf("write %d on a failing disk = %v, want ErrUnavailable", i, err)
		}
		msg := err.Error()
		if i == 0 && !strings.Contains(msg, "the data directory "+dir+" cannot be written (appending to the log): "+errDiskFull.Error()) {
			t.Fatalf("first failed write: %q does not name the directory and the cause", msg)
		}
		if got := s.Revision("c"); got != rev {
			t.Fatalf("revision moved to %d on a failed write", got)
		}
	}
	if got := image(t, s); got != before {
		t.Fatalf("a failed write changed the state:\n%s\nwant:\n%s", got, before)
	}
	if st := n.Status(); st.StorageError == "" {
		t.Fatalf("status shows no storage error: %+v", st)
	}

	fail.Store(false)
	waitFor(t, 10*time.Second, "leadership after the disk recovered", func() bool { return n.IsLeader() })
	if _, err := s.Apply("c", nodesBatch(200, 201)); err != nil {
		t.Fatalf("write after the disk recovered: %v", err)
	}
	want := image(t, s)
	if err := n.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	s2, _ := open(t, dir, nil)
	if got := image(t, s2); got != want {
		t.Fatalf("after a restart:\n%s\nwant:\n%s", got, want)
	}
	if _, ok := s2.Snapshot("c").Node("n100"); ok {
		t.Fatal("a write that failed is in the store after a restart")
	}
}

func TestClusterFailover(t *testing.T) {
	raftAddrs := testnet.FreeAddrs(t, 3)
	var peers []Peer
	for i, a := range raftAddrs {
		peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i+1), RaftAddr: a, ClientAddr: fmt.Sprintf("127.0.0.1:%d", 50061+i)})
	}
	stores := make([]*state.Store, 3)
	nodes := make([]*Node, 3)
	for i, p := range peers {
		stores[i] = state.New()
		n, err := Open(stores[i], Options{DataDir: t.TempDir(), NodeID: p.ID, RaftAddr: p.RaftAddr, Peers: peers,
			Bootstrap: i == 0, ElectionTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
		t.Cleanup(func() { _ = n.Close(5 * time.Second) })
	}
	leader := func(exclude int) int {
		for i, n := range nodes {
			if i != exclude && n.IsLeader() {
				return i
			}
		}
		return -1
	}
	waitFor(t, 10*time.Second, "a leader", func() bool { return leader(-1) >= 0 })
	l := leader(-1)
	for i := range 10 {
		if _, err := stores[l].Apply("c", nodesBatch(i, i+1)); err != nil {
			t.Fatal(err)
		}
	}
	f := (l + 1) % 3
	_, err := stores[f].Apply("c", nodesBatch(50, 51))
	var nle *state.NotLeaderError
	if !errors.As(err, &nle) || nle.LeaderID != peers[l].ID || nle.Leader != peers[l].ClientAddr {
		t.Fatalf("write on a follower = %v, want a NotLeaderError naming %s at %s", err, peers[l].ID, peers[l].ClientAddr)
	}
	waitFor(t, 5*time.Second, "replication", func() bool { return stores[f].Revision("c") == stores[l].Revision("c") })
	for i, st := range stores {
		if st.ID() == "" || st.ID() != stores[l].ID() {
			t.Fatalf("member %d has store id %q, the leader %q", i, st.ID(), stores[l].ID())
		}
	}
	// A resync in progress when the leader crashes: its parts are on every member, and the
	// new leader drops them.
	r, err := stores[l].BeginResync("c")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(nodesBatch(100, 110).Changes); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the staged part on a follower", func() bool { return len(stores[f].StagedResyncs()) == 1 })

	// Crash the leader (no leadership transfer) and time the election.
	start := time.Now()
	if err := nodes[l].raft.Shutdown().Error(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "a new leader", func() bool { return leader(l) >= 0 })
	t.Logf("new leader after %s", time.Since(start).Round(time.Millisecond))
	nl := leader(l)
	if got, want := stores[nl].Revision("c"), uint64(10); got != want {
		t.Fatalf("new leader at revision %d, want %d", got, want)
	}
	if _, err := stores[nl].Apply("c", nodesBatch(10, 11)); err != nil {
		t.Fatalf("write on the new leader: %v", err)
	}
	if got := stores[nl].StagedResyncs(); len(got) != 0 {
		t.Fatalf("the new leader kept the crashed leader's resync: %+v", got)
	}
	if _, ok := stores[nl].Snapshot("c").Node("n100"); ok {
		t.Fatal("a staged part of an unfinished resync shows in the cluster")
	}
}

func TestParsePeers(t *testing.T) {
	ps, err := ParsePeers("a=127.0.0.1:7001@127.0.0.1:50051, b=127.0.0.1:7002")
	if err != nil || len(ps) != 2 || ps[0] != (Peer{"a", "127.0.0.1:7001", "127.0.0.1:50051"}) || ps[1].ClientAddr != "" {
		t.Fatalf("ParsePeers = %+v, %v", ps, err)
	}
	if got := FormatPeers(ps); got != "a=127.0.0.1:7001@127.0.0.1:50051,b=127.0.0.1:7002" {
		t.Fatalf("FormatPeers = %q", got)
	}
	for _, bad := range []string{"", "a", "a=", "a=nohost", "a=1.2.3.4:1@bad", "a=1.2.3.4:1,a=1.2.3.4:2", "a=1.2.3.4:1,b=1.2.3.4:1"} {
		if _, err := ParsePeers(bad); err == nil {
			t.Errorf("ParsePeers(%q) accepted", bad)
		}
	}
}

func writeFile(path string) error { return os.WriteFile(path, []byte("x"), 0o600) }

// TestStoreIDSurvivesARestartFromASnapshot: the store id restored from a snapshot (before the
// node becomes the store's replicator) is kept, not drawn anew.
func TestStoreIDSurvivesARestartFromASnapshot(t *testing.T) {
	dir := t.TempDir()
	s, n := open(t, dir, nil)
	if _, err := s.Apply("c", nodesBatch(0, 3)); err != nil {
		t.Fatal(err)
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	if err := n.Close(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	s2, n2 := open(t, dir, nil)
	waitFor(t, 5*time.Second, "the restarted node to lead", n2.IsLeader)
	if s2.ID() != id || id == "" {
		t.Fatalf("store id %q after a restart from a snapshot, want %q", s2.ID(), id)
	}
}
