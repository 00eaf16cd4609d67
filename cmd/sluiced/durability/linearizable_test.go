package durability

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// regInput is one operation on a register: the weight of a queue, written or read.
type regInput struct {
	key   string
	write bool
	value int32
}

// registers is the sequential model: each queue's weight is a register (0 before the first
// write), and the history is checked queue by queue.
var registers = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(regInput).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return int32(0) },
	Step: func(state, input, output any) (bool, any) {
		in := input.(regInput)
		if in.write {
			return true, in.value
		}
		return output.(int32) == state.(int32), state
	},
	DescribeOperation: func(input, output any) string {
		in := input.(regInput)
		if in.write {
			return fmt.Sprintf("write %s=%d", in.key, in.value)
		}
		return fmt.Sprintf("read %s -> %v", in.key, output)
	},
}

// staleRead is a stale read of a key: what it returned, when, by which client.
type staleRead struct {
	client    int
	key       string
	value     int32
	call, ret int64
}

// history records operations from several clients.
type history struct {
	mu  sync.Mutex
	ops []porcupine.Operation
	// stale are the stale reads, checked against their own promise (checkStale).
	stale []staleRead
	// writesUnknown counts writes whose outcome is unknown (an error: they may apply later).
	writesUnknown, reads, writes, readErrors int
}

func (h *history) add(op porcupine.Operation) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, op)
}

// nowNanos is the history's clock: monotonic nanoseconds since the run began.
func nowNanos(start time.Time) int64 { return int64(time.Since(start)) }

// runClient writes and reads queue weights in cluster "lin" through c until ctx ends. Every
// write sets a value no one else writes; a write that fails may still apply (its return is
// open-ended); a read that fails is left out. A third of the default reads go to a member
// picked at random among direct (plain connections that follow no leader: a follower
// forwards them, a member cut off from the quorum must refuse them).
func runClient(ctx context.Context, id int, c *sluice.Client, direct []sluicev1.ClusterStateServiceClient, keys []string, start time.Time, h *history) {
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	seq := int32(0)
	for ctx.Err() == nil {
		key := keys[rng.IntN(len(keys))]
		octx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if rng.IntN(2) == 0 {
			seq++
			v := int32(id)*1_000_000 + seq
			call := nowNanos(start)
			_, err := c.Apply(octx, "lin", false, sluice.UpsertQueue(&sluicev1.Queue{Name: key, Weight: v}))
			ret := nowNanos(start)
			if _, notLeader := sluice.LeaderOf(err); notLeader {
				// Refused before it reached the log (the client follows the leader next time).
				cancel()
				continue
			}
			h.mu.Lock()
			h.writes++
			if err != nil {
				h.writesUnknown++
				ret = math.MaxInt64
			}
			h.mu.Unlock()
			h.add(porcupine.Operation{ClientId: id, Input: regInput{key: key, write: true, value: v}, Call: call, Return: ret})
			if err != nil {
				// Each write of unknown outcome multiplies the checker's work: back off while
				// the cluster recovers.
				cancel()
				time.Sleep(500 * time.Millisecond)
				continue
			}
		} else if rng.IntN(3) == 0 {
			// A stale read on the client's own member, at most staleBound behind; the client
			// adds its revision floor (its own writes) as min_revision.
			call := nowNanos(start)
			resp, err := c.State.GetQueue(octx, &sluicev1.GetQueueRequest{Cluster: "lin", Name: key, Read: &sluicev1.ReadOptions{
				Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE, MaxStaleness: durationpb.New(staleBound)}})
			ret := nowNanos(start)
			var out int32
			switch {
			case err == nil:
				out = resp.GetQueue().GetWeight()
			case status.Code(err) == codes.NotFound:
			default:
				cancel()
				continue
			}
			h.mu.Lock()
			h.stale = append(h.stale, staleRead{client: id, key: key, value: out, call: call, ret: ret})
			h.mu.Unlock()
		} else {
			reader := c.State
			if len(direct) > 0 && rng.IntN(3) == 0 {
				reader = direct[rng.IntN(len(direct))]
			}
			call := nowNanos(start)
			resp, err := reader.GetQueue(octx, &sluicev1.GetQueueRequest{Cluster: "lin", Name: key})
			ret := nowNanos(start)
			var out int32
			switch {
			case err == nil:
				out = resp.GetQueue().GetWeight()
			case status.Code(err) == codes.NotFound:
			default:
				h.mu.Lock()
				h.readErrors++
				h.mu.Unlock()
				cancel()
				continue
			}
			h.mu.Lock()
			h.reads++
			h.mu.Unlock()
			h.add(porcupine.Operation{ClientId: id, Input: regInput{key: key}, Output: out, Call: call, Return: ret})
		}
		cancel()
		time.Sleep(time.Duration(2+rng.IntN(8)) * time.Millisecond)
	}
}

// staleBound is the max_staleness of the stale reads.
const staleBound = 2 * time.Second

// checkStale checks every stale read against its promise, from the history's acknowledged
// writes: the value it returned was not overwritten for good more than staleBound before the
// read began (some write of another value was called after the value's write returned, and
// returned itself before call - staleBound), and it is not older than a write the same client
// saw acknowledged before the read (read-your-writes, through min_revision). It returns the
// violations.
func checkStale(h *history) []string {
	type write struct {
		client    int
		value     int32
		call, ret int64
	}
	writes := map[string][]write{}
	for _, op := range h.ops {
		in := op.Input.(regInput)
		if in.write && op.Return != math.MaxInt64 {
			writes[in.key] = append(writes[in.key], write{op.ClientId, in.value, op.Call, op.Return})
		}
	}
	var bad []string
	for _, r := range h.stale {
		ws := writes[r.key]
		// The write that produced the value (none for 0, or for a write of unknown outcome).
		var src *write
		for i := range ws {
			if ws[i].value == r.value {
				src = &ws[i]
			}
		}
		srcRet := int64(-1)
		if src != nil {
			srcRet = src.ret
		}
		if r.value != 0 && src == nil {
			continue // a write whose acknowledgement was lost
		}
		for _, w := range ws {
			if w.value == r.value || w.call <= srcRet {
				continue
			}
			if w.ret < r.call-int64(staleBound) {
				bad = append(bad, fmt.Sprintf("client %d read %s=%d at %v, overwritten by %d for good at %v (bound %v)",
					r.client, r.key, r.value, time.Duration(r.call), w.value, time.Duration(w.ret), staleBound))
				break
			}
			if w.client == r.client && w.ret < r.call {
				bad = append(bad, fmt.Sprintf("client %d read %s=%d at %v, older than its own write of %d acknowledged at %v",
					r.client, r.key, r.value, time.Duration(r.call), w.value, time.Duration(w.ret)))
				break
			}
		}
	}
	return bad
}

// nemesis hurts one member at a time until ctx ends, taking turns: a partition that cuts the
// leader off from both followers (its gRPC port stays reachable), a kill -9 and a restart, a
// pause (SIGSTOP) and a resume, a partition that cuts a follower off. While a member is cut
// off a probe reads from it directly (probePartitioned); the partition is healed before the
// next fault, and the member must be ready again within 30 s. It returns what it did.
func nemesis(ctx context.Context, t *testing.T, members []*proc, keys []string, start time.Time, h *history) []string {
	var did []string
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	for round := 0; ; round++ {
		select {
		case <-ctx.Done():
			return did
		case <-time.After(time.Duration(1500+rng.IntN(1000)) * time.Millisecond):
		}
		leader := leaderOf(members, nil)
		victim := leader
		if victim == nil || rng.IntN(3) == 0 {
			victim = members[rng.IntN(len(members))]
		}
		switch round % 4 {
		case 0, 3:
			// The leader first, a follower on the fourth turn.
			if round%4 == 0 && leader != nil {
				victim = leader
			}
			if round%4 == 3 && victim == leader {
				victim = members[(slices.Index(members, leader)+1+rng.IntN(len(members)-1))%len(members)]
			}
			what := "partition follower " + victim.name
			if victim == leader {
				what = "partition leader " + victim.name
			}
			if err := isolate(members, victim); err != nil {
				t.Errorf("%s: %v", what, err)
				_ = heal(members)
				return did
			}
			p := probePartitioned(victim, keys, start, h, rng)
			select {
			case <-ctx.Done():
			case <-time.After(partitionBound + time.Duration(rng.IntN(1500))*time.Millisecond):
			}
			res := p.stop()
			if err := heal(members); err != nil {
				t.Errorf("healing after %s: %v", what, err)
				return did
			}
			healed := time.Now()
			waitFor(t, 30*time.Second, victim.name+" ready after the heal", victim.ready)
			did = append(did, fmt.Sprintf("%s (%s; ready %v after the heal)", what, res, time.Since(healed).Round(time.Millisecond)))
			for _, v := range res.violations {
				t.Errorf("%s: %s", what, v)
			}
			if victim == leader && res.firstRefusal < 0 && ctx.Err() == nil {
				t.Errorf("%s: it never refused a default read while cut off (%s)", what, res)
			}
		case 1:
			victim.kill9()
			time.Sleep(time.Duration(500+rng.IntN(1000)) * time.Millisecond)
			victim.start()
			did = append(did, "kill -9 "+victim.name)
		case 2:
			pid := victim.pid()
			if pid <= 0 {
				continue
			}
			_ = syscall.Kill(pid, syscall.SIGSTOP)
			time.Sleep(time.Duration(1500+rng.IntN(1500)) * time.Millisecond)
			_ = syscall.Kill(pid, syscall.SIGCONT)
			did = append(did, "pause "+victim.name)
		}
		// Let the cluster settle before the next fault, so that a quorum stays up.
		waitFor(t, 30*time.Second, "a leader after "+did[len(did)-1], func() bool { return leaderOf(members, nil) != nil })
		time.Sleep(500 * time.Millisecond)
	}
}

// probe reads from one member that was just cut off, directly, until stopped.
type probe struct {
	m      *proc
	cut    time.Time
	cancel context.CancelFunc
	done   chan probeResult
}

// probeResult is what a probe saw: how long after the cut the member first refused a default
// read (-1 if it never did), how many reads it answered itself, how many it forwarded to
// the leader, how many it refused, and the broken promises: a read it answered itself though
// called more than partitionBound after the cut, or an error other than the refusal of a
// member cut off (refusedByCutOff).
type probeResult struct {
	firstRefusal                 time.Duration
	answered, forwarded, refused int
	violations                   []string
}

func (r probeResult) String() string {
	first := "never"
	if r.firstRefusal >= 0 {
		first = r.firstRefusal.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("default reads on it: %d answered by itself, %d forwarded, %d refused, the first %s after the cut",
		r.answered, r.forwarded, r.refused, first)
}

// probePartitioned starts a probe of m, cut off now. Its reads join the history (as client
// 100), so porcupine checks what the cut-off member answered.
func probePartitioned(m *proc, keys []string, start time.Time, h *history, rng *rand.Rand) *probe {
	ctx, cancel := context.WithCancel(context.Background())
	p := &probe{m: m, cut: time.Now(), cancel: cancel, done: make(chan probeResult, 1)}
	conn, err := grpc.NewClient(m.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		p.done <- probeResult{firstRefusal: -1, violations: []string{err.Error()}}
		return p
	}
	c := sluicev1.NewClusterStateServiceClient(conn)
	keySeq := rng.Perm(len(keys))
	go func() {
		defer conn.Close()
		res := probeResult{firstRefusal: -1}
		for i := 0; ctx.Err() == nil; i++ {
			key := keys[keySeq[i%len(keySeq)]]
			rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
			var hdr metadata.MD
			call := nowNanos(start)
			calledAt := time.Since(p.cut)
			resp, err := c.GetQueue(rctx, &sluicev1.GetQueueRequest{Cluster: "lin", Name: key}, grpc.Header(&hdr))
			ret := nowNanos(start)
			rcancel()
			if ctx.Err() != nil {
				break
			}
			if err == nil || status.Code(err) == codes.NotFound {
				h.add(porcupine.Operation{ClientId: 100, Input: regInput{key: key}, Output: resp.GetQueue().GetWeight(), Call: call, Return: ret})
				if fmt.Sprint(hdr.Get("sluice-member")) != "["+m.name+"]" {
					res.forwarded++
				} else {
					res.answered++
					if calledAt > partitionBound {
						res.violations = append(res.violations, fmt.Sprintf("%s answered a default read of %s itself (%d), called %v after it was cut off",
							m.name, key, resp.GetQueue().GetWeight(), calledAt.Round(time.Millisecond)))
					}
				}
			} else {
				res.refused++
				if res.firstRefusal < 0 {
					res.firstRefusal = time.Since(p.cut)
				}
				if !refusedByCutOff(err) {
					res.violations = append(res.violations, fmt.Sprintf("default read on %s: %v (reason %q); want UNAVAILABLE, NOT_LEADER or STORE_UNAVAILABLE", m.name, err, reasonOf(err)))
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		p.done <- res
	}()
	return p
}

// stop ends the probe and returns what it saw.
func (p *probe) stop() probeResult {
	p.cancel()
	return <-p.done
}

// lostWrites checks the value each key ended with (final, read after the run) against the
// acknowledged writes: it must come from a write that no acknowledged write followed (called
// after it returned), and be 0 only if no write was acknowledged. It returns the violations.
func lostWrites(h *history, final map[string]int32) []string {
	var bad []string
	for key, v := range final {
		var src *porcupine.Operation
		acked := 0
		for i, op := range h.ops {
			in := op.Input.(regInput)
			if in.key != key || !in.write {
				continue
			}
			if op.Return != math.MaxInt64 {
				acked++
			}
			if in.value == v {
				src = &h.ops[i]
			}
		}
		switch {
		case v == 0 && acked > 0:
			bad = append(bad, fmt.Sprintf("%s ended unwritten after %d acknowledged writes", key, acked))
			continue
		case v == 0:
			continue
		case src == nil:
			bad = append(bad, fmt.Sprintf("%s ended with %d, which no one wrote", key, v))
			continue
		}
		for _, op := range h.ops {
			in := op.Input.(regInput)
			if in.key == key && in.write && op.Return != math.MaxInt64 && op.Call > src.Return {
				bad = append(bad, fmt.Sprintf("%s ended with %d (written by client %d, acknowledged at %v), but the write of %d called at %v was acknowledged: lost",
					key, v, src.ClientId, time.Duration(src.Return), in.value, time.Duration(op.Call)))
				break
			}
		}
	}
	return bad
}

// TestLinearizable runs 5 clients writing and reading queue weights against a 3-member
// cluster, each client attached to its own member (and following the leader) and also reading
// from any member directly, and checks the history with porcupine: once without faults (the
// control) and once under the nemesis (partitions of the leader and of a follower, kill -9
// and restart, SIGSTOP and resume). At the end every key is read from the leader: the
// history with those reads must be linearizable, and no acknowledged write lost
// (lostWrites). Short: 5 s of control and 15 s of faults (a leader partition, a kill, a
// pause); full (make test-jepsen): 20 s and 3 minutes.
func TestLinearizable(t *testing.T) {
	need(t)
	control, faulty := 5*time.Second, 15*time.Second
	if full() {
		control, faulty = 20*time.Second, 3*time.Minute
	}
	for _, run := range []struct {
		name   string
		d      time.Duration
		faults bool
	}{{"control", control, false}, {"faults", faulty, true}} {
		t.Run(run.name, func(t *testing.T) {
			members := startCluster(t, 3, faultFlag)
			var endpoints []string
			var direct []sluicev1.ClusterStateServiceClient
			for _, m := range members {
				endpoints = append(endpoints, m.grpc)
				direct = append(direct, stateOn(t, m))
			}
			keys := []string{"q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"}
			h := &history{}
			start := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), run.d)
			defer cancel()
			var wg sync.WaitGroup
			for id := range 5 {
				m := members[id%len(members)]
				c := dial(t, m.grpc, sluice.WithEndpoints(endpoints...))
				wg.Add(1)
				go func() {
					defer wg.Done()
					runClient(ctx, id, c, direct, keys, start, h)
				}()
			}
			var faults []string
			if run.faults {
				faults = nemesis(ctx, t, members, keys, start, h)
			}
			wg.Wait()
			final := finalValues(t, members, keys, start, h)
			lost := lostWrites(h, final)
			res, info := porcupine.CheckOperationsVerbose(registers, h.ops, 2*time.Minute)
			staleBad := checkStale(h)
			report(t, "linearizability (%s, %v): %d reads, %d writes (%d with unknown outcome), %d failed reads left out, %d stale reads (%d broke their promise); %d acknowledged writes lost; faults: %v; porcupine: %s",
				run.name, run.d, h.reads, h.writes, h.writesUnknown, h.readErrors, len(h.stale), len(staleBad), len(lost), faults, res)
			for _, l := range lost {
				t.Errorf("lost write: %s", l)
			}
			for i, b := range staleBad {
				if i == 5 {
					break
				}
				t.Errorf("stale read: %s", b)
			}
			if res != porcupine.Ok {
				f, err := os.CreateTemp("", "sluice-linearizability-*.html")
				if err == nil {
					_ = porcupine.Visualize(registers, info, f)
					f.Close()
					t.Logf("visualization of the history: %s", f.Name())
				}
				t.Fatalf("the history is %s", res)
			}
			if h.reads < 50 || h.writes-h.writesUnknown < 50 {
				t.Fatalf("too little happened: %d reads, %d acknowledged writes", h.reads, h.writes-h.writesUnknown)
			}
		})
	}
}

// finalValues reads every key from the leader once the run is over (adding the reads to the
// history, as client 99) and returns the values.
func finalValues(t *testing.T, members []*proc, keys []string, start time.Time, h *history) map[string]int32 {
	t.Helper()
	var leader *proc
	waitFor(t, 30*time.Second, "a leader for the final reads", func() bool { leader = leaderOf(members, nil); return leader != nil })
	c := dial(t, leader.grpc, sluice.WithEndpoints(leader.grpc))
	out := map[string]int32{}
	for _, key := range keys {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		call := nowNanos(start)
		resp, err := c.State.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "lin", Name: key})
		ret := nowNanos(start)
		cancel()
		if err != nil && status.Code(err) != codes.NotFound {
			t.Fatalf("final read of %s: %v", key, err)
		}
		out[key] = resp.GetQueue().GetWeight()
		h.add(porcupine.Operation{ClientId: 99, Input: regInput{key: key}, Output: out[key], Call: call, Return: ret})
	}
	return out
}

// TestCheckStale checks the stale-read checker on made-up histories.
func TestCheckStale(t *testing.T) {
	s := int64(time.Second)
	w := func(client int, v int32, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: regInput{key: "q", write: true, value: v}, Call: call, Return: ret}
	}
	h := &history{ops: []porcupine.Operation{w(1, 10, 0, s), w(2, 20, 2*s, 3*s)}}
	h.stale = []staleRead{
		{client: 3, key: "q", value: 10, call: 4 * s, ret: 4*s + 1}, // 20 landed 1 s before: within the bound
		{client: 3, key: "q", value: 10, call: 6 * s, ret: 6*s + 1}, // 20 landed 3 s before: too stale
		{client: 2, key: "q", value: 10, call: 4 * s, ret: 4*s + 1}, // older than its own write of 20
		{client: 3, key: "q", value: 20, call: 9 * s, ret: 9*s + 1}, // the newest value: fine
	}
	if bad := checkStale(h); len(bad) != 2 {
		t.Fatalf("violations %q, want the too stale read and the one older than its own write", bad)
	}
}

// TestLostWrites checks the lost-write checker on made-up histories.
func TestLostWrites(t *testing.T) {
	s := int64(time.Second)
	w := func(key string, v int32, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: 1, Input: regInput{key: key, write: true, value: v}, Call: call, Return: ret}
	}
	h := &history{ops: []porcupine.Operation{
		w("a", 1, 0, s), w("a", 2, 2*s, 3*s), // a: 2 follows 1
		w("b", 3, 0, 2*s), w("b", 4, s, 3*s), // b: concurrent, either may win
		w("c", 5, 0, s), w("c", 6, 2*s, math.MaxInt64), // c: 6 of unknown outcome
		w("d", 7, 0, s),
	}}
	for _, tc := range []struct {
		final map[string]int32
		bad   int
	}{
		{map[string]int32{"a": 2, "b": 3, "c": 5, "d": 7}, 0},
		{map[string]int32{"a": 2, "b": 4, "c": 6, "d": 7}, 0},
		{map[string]int32{"a": 1}, 1}, // 2 was acknowledged after 1: lost
		{map[string]int32{"d": 0}, 1}, // an acknowledged write vanished
		{map[string]int32{"d": 8}, 1}, // a value nobody wrote
	} {
		if bad := lostWrites(h, tc.final); len(bad) != tc.bad {
			t.Errorf("final %v: violations %q, want %d", tc.final, bad, tc.bad)
		}
	}
}
