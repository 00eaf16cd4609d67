package state

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// fuzzInput turns random bytes into batches of small changes whose names come from tiny
// alphabets, so that references sometimes resolve and sometimes do not.
type fuzzInput struct {
	data []byte
}

func (in *fuzzInput) byte() byte {
	if len(in.data) == 0 {
		return 0
	}
	b := in.data[0]
	in.data = in.data[1:]
	return b
}

func (in *fuzzInput) pick(names ...string) string { return names[int(in.byte())%len(names)] }

var (
	fuzzNames      = []string{"a", "b", "c", "a", "b", ""}
	fuzzNamespaces = []string{"ns", "ns", "x"}
	fuzzQueues     = []string{"default", "qa", "qb", "root", "qa", ""}
	fuzzParents    = []string{"", "", "root", "qa", "qb", "default"}
	fuzzNodes      = []string{"", "a", "b", "c"}
	fuzzHyper      = []string{"h1", "h2", "h3", "a"}
	fuzzMembers    = []string{"a", "b", "h1", "h2", "h3"}
)

func (in *fuzzInput) change() Change {
	switch in.byte() % 9 {
	case 0:
		return node(in.pick(fuzzNames...))
	case 1:
		return queue(in.pick(fuzzQueues...), in.pick(fuzzParents...))
	case 2:
		return job(in.pick(fuzzNamespaces...), in.pick(fuzzNames...), in.pick(fuzzQueues...))
	case 3:
		ns, name, j, n := in.pick(fuzzNamespaces...), in.pick(fuzzNames...), in.pick(fuzzNames...), in.pick(fuzzNodes...)
		return task(ns, name, j, n, api.TaskStatus(1+in.byte()%10))
	case 4:
		return Change{PriorityClass: &api.PriorityClass{Name: in.pick(fuzzNames...)}}
	case 5:
		return Change{Quota: &api.NamespaceQuota{Namespace: in.pick(fuzzNamespaces...)}}
	case 6:
		return Change{Budget: &api.DisruptionBudget{Namespace: in.pick(fuzzNamespaces...), Name: in.pick(fuzzNames...)}}
	case 7:
		name, tier := in.pick(fuzzHyper...), int32(in.byte()%4)
		members := make([]string, int(in.byte()%3))
		for i := range members {
			members[i] = in.pick(fuzzMembers...)
		}
		return hyper(name, tier, members...)
	default:
		k := Kind(in.byte() % 9) // 0 is invalid on purpose
		ns := in.pick(fuzzNamespaces...)
		var name string
		switch k {
		case KindQueue:
			name = in.pick(fuzzQueues...)
		case KindHyperNode:
			name = in.pick(fuzzHyper...)
		default:
			name = in.pick(fuzzNames...)
		}
		return del(k, ns, name)
	}
}

// batches decodes the whole input.
func (in *fuzzInput) batches() []Batch {
	var out []Batch
	for len(in.data) > 0 && len(out) < 64 {
		h := in.byte()
		b := Batch{ReplaceAll: h&0xC0 == 0xC0}
		for n := int(h % 8); n > 0; n-- {
			b.Changes = append(b.Changes, in.change())
		}
		out = append(out, b)
	}
	return out
}

// checkInvariants verifies what the store promises about any state it accepted.
func checkInvariants(v *View) error {
	nodes := map[string]bool{}
	for _, n := range v.Nodes() {
		nodes[n.Name] = true
	}
	queues := map[string]*api.Queue{}
	for _, q := range v.Queues() {
		queues[q.Name] = q
	}
	jobs := map[string]*api.Job{}
	for _, j := range v.Jobs() {
		jobs[j.Key()] = j
		if queues[j.Queue] == nil {
			return fmt.Errorf("job %s: queue %q missing", j.Key(), j.Queue)
		}
	}
	tasks := v.Tasks()
	if !slices.IsSortedFunc(tasks, func(a, b *api.Task) int { return cmpString(a.Key(), b.Key()) }) {
		return fmt.Errorf("tasks not sorted: %v", taskKeys(tasks))
	}
	byJob, byNode := map[string][]string{}, map[string][]string{}
	for _, t := range tasks {
		if jobs[t.JobKey()] == nil {
			return fmt.Errorf("task %s: job %q missing", t.Key(), t.JobKey())
		}
		if t.Node != "" && !nodes[t.Node] {
			return fmt.Errorf("task %s: node %q missing", t.Key(), t.Node)
		}
		if t.Node == "" && placed(t.Status) {
			return fmt.Errorf("task %s: %s without a node", t.Key(), t.Status)
		}
		byJob[t.JobKey()] = append(byJob[t.JobKey()], t.Key())
		if t.Node != "" {
			byNode[t.Node] = append(byNode[t.Node], t.Key())
		}
	}
	for key := range jobs {
		if got := taskKeys(v.TasksOfJob(key)); !slices.Equal(got, byJob[key]) {
			return fmt.Errorf("TasksOfJob(%s) = %v, want %v", key, got, byJob[key])
		}
	}
	for name := range nodes {
		if got := taskKeys(v.TasksOnNode(name)); !slices.Equal(got, byNode[name]) {
			return fmt.Errorf("TasksOnNode(%s) = %v, want %v", name, got, byNode[name])
		}
	}
	for _, q := range queues {
		seen := map[string]bool{q.Name: true}
		for p := q.Parent; p != "" && p != api.RootQueue; p = queues[p].Parent {
			if queues[p] == nil {
				return fmt.Errorf("queue %s: ancestor %q missing", q.Name, p)
			}
			if seen[p] {
				return fmt.Errorf("queue %s: parent cycle through %q", q.Name, p)
			}
			seen[p] = true
		}
	}
	hypers := map[string]*api.HyperNode{}
	for _, h := range v.HyperNodes() {
		hypers[h.Name] = h
	}
	for _, h := range hypers {
		for _, m := range h.Members {
			if h.Tier == 1 && !nodes[m] {
				return fmt.Errorf("hypernode %s: node %q missing", h.Name, m)
			}
			if h.Tier > 1 && (hypers[m] == nil || hypers[m].Tier >= h.Tier) {
				return fmt.Errorf("hypernode %s: bad member %q", h.Name, m)
			}
		}
	}
	return nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var fuzzSeeds = [][]byte{
	{},
	{0x05, 0, 0, 1, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 1, 6},
	{0xC3, 0, 1, 2, 0, 1, 1, 3, 0, 1, 1, 1, 5, 0x02, 8, 3, 0, 1, 8, 1, 0, 0},
	{0x07, 7, 0, 1, 2, 0, 1, 7, 1, 2, 1, 2, 0, 1, 0, 8, 8, 0, 0, 8, 1, 0, 0, 8, 2, 0, 1},
	[]byte("the quick brown fox jumps over the lazy dog, twice: the quick brown fox"),
}

// FuzzApply applies random batches: Apply never panics, returns only *ValidationErrors,
// advances the revision iff it succeeds, changes nothing when it fails, and every state it
// accepts keeps the invariants. A replicated twin (each batch checked, encoded, decoded and
// applied as a raft log's state machine does) must answer and end up alike.
func FuzzApply(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New()
		twin, _ := replicated()
		in := &fuzzInput{data: data}
		for i, b := range in.batches() {
			rev := s.Revision("c")
			before := dump(&s.Snapshot("c").View)
			got, err := s.Apply("c", b)
			now := s.Revision("c")
			tgot, terr := twin.Apply("c", b)
			if tgot != got || fmt.Sprint(terr) != fmt.Sprint(err) {
				t.Fatalf("batch %d: plain store gave %d, %v; replicated %d, %v", i, got, err, tgot, terr)
			}
			if a, b := dump(&s.Snapshot("c").View), dump(&twin.Snapshot("c").View); a != b {
				t.Fatalf("batch %d: plain and replicated stores differ:\n%s\nand:\n%s", i, a, b)
			}
			if err != nil {
				var ve *ValidationError
				if !errors.As(err, &ve) {
					t.Fatalf("batch %d: %v is not a *ValidationError", i, err)
				}
				if ve.Index < 0 || ve.Index >= len(b.Changes) {
					t.Fatalf("batch %d: error index %d out of range: %v", i, ve.Index, err)
				}
				if got != rev || now != rev {
					t.Fatalf("batch %d: rejected, but revision %d -> %d (returned %d)", i, rev, now, got)
				}
				if after := dump(&s.Snapshot("c").View); after != before {
					t.Fatalf("batch %d: rejected (%v), but the state changed:\n%s\nto:\n%s", i, err, before, after)
				}
			} else if got != rev+1 || now != rev+1 {
				t.Fatalf("batch %d: accepted, but revision %d -> %d (returned %d)", i, rev, now, got)
			}
			if err := checkInvariants(&s.Snapshot("c").View); err != nil {
				t.Fatalf("batch %d (%+v): %v", i, b, err)
			}
		}
	})
}

// FuzzUpdate sends the same random changes one by one through Update: a failed call changes
// nothing, the others commit, and the invariants hold.
func FuzzUpdate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := New()
		in := &fuzzInput{data: data}
		for i, b := range in.batches() {
			rev := s.Revision("c")
			ok := 0
			got, err := s.Update("c", func(tx *Txn) error {
				for _, c := range b.Changes {
					before := dump(&tx.View)
					if err := tx.Upsert(c); err != nil {
						var ve *ValidationError
						if !errors.As(err, &ve) {
							t.Fatalf("batch %d: %v is not a *ValidationError", i, err)
						}
						if after := dump(&tx.View); after != before {
							t.Fatalf("batch %d: failed call (%v) changed the transaction:\n%s\nto:\n%s", i, err, before, after)
						}
						if err := overlayAgrees(tx); err != nil {
							t.Fatalf("batch %d: after a failed call (%v): %v", i, ve, err)
						}
						continue
					}
					ok++
				}
				return checkInvariants(&tx.View)
			})
			if err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
			want := rev
			if ok > 0 {
				want++
			}
			if got != want || s.Revision("c") != want {
				t.Fatalf("batch %d: %d calls succeeded, revision %d -> %d (returned %d)", i, ok, rev, s.Revision("c"), got)
			}
			if err := checkInvariants(&s.Snapshot("c").View); err != nil {
				t.Fatalf("batch %d: %v", i, err)
			}
		}
	})
}
