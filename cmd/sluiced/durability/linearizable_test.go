package durability

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

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

// history records operations from several clients.
type history struct {
	mu  sync.Mutex
	ops []porcupine.Operation
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
// open-ended); a read that fails is left out.
func runClient(ctx context.Context, id int, c *sluice.Client, keys []string, start time.Time, h *history) {
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
		} else {
			call := nowNanos(start)
			resp, err := c.State.GetQueue(octx, &sluicev1.GetQueueRequest{Cluster: "lin", Name: key})
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

// nemesis hurts one member at a time until ctx ends: a kill -9 and a restart, or a pause
// (SIGSTOP) of the leader and a resume. It returns what it did.
func nemesis(ctx context.Context, t *testing.T, members []*proc) []string {
	var did []string
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
	for round := 0; ; round++ {
		select {
		case <-ctx.Done():
			return did
		case <-time.After(time.Duration(1500+rng.IntN(1000)) * time.Millisecond):
		}
		victim := leaderOf(members, nil)
		if victim == nil || rng.IntN(3) == 0 {
			victim = members[rng.IntN(len(members))]
		}
		if round%2 == 0 {
			victim.kill9()
			time.Sleep(time.Duration(500+rng.IntN(1000)) * time.Millisecond)
			victim.start()
			did = append(did, "kill -9 "+victim.name)
		} else {
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

// TestLinearizable runs 5 clients writing and reading queue weights against a 3-member
// cluster, each client attached to its own member (and following the leader), and checks the
// history with porcupine: once without faults (the control) and once while members are
// killed with -9 and restarted, or paused with SIGSTOP and resumed. Short: 5 s of control
// and 15 s of faults; full (make test-jepsen): 20 s and 3 minutes.
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
			members := startCluster(t, 3)
			var endpoints []string
			for _, m := range members {
				endpoints = append(endpoints, m.grpc)
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
					runClient(ctx, id, c, keys, start, h)
				}()
			}
			var faults []string
			if run.faults {
				faults = nemesis(ctx, t, members)
			}
			wg.Wait()
			res, info := porcupine.CheckOperationsVerbose(registers, h.ops, 2*time.Minute)
			report(t, "linearizability (%s, %v): %d reads, %d writes (%d with unknown outcome), %d failed reads left out; faults: %v; porcupine: %s",
				run.name, run.d, h.reads, h.writes, h.writesUnknown, h.readErrors, faults, res)
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
