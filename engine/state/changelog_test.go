package state

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// checkChanges checks that c names, with the later snapshot's object, every node, job and task
// whose object differs between the two snapshots (added, replaced or deleted), and that each
// list is sorted without repeats.
func checkChanges(t *testing.T, old, cur *Snapshot, c api.ObjectChanges) {
	t.Helper()
	check := func(kind string, oldObjs, curObjs map[string]any, keys []string, objs []any) {
		t.Helper()
		named := map[string]bool{}
		for i, k := range keys {
			if i > 0 && keys[i-1] >= k {
				t.Fatalf("%s changes not sorted or repeated: %q after %q", kind, k, keys[i-1])
			}
			named[k] = true
			if want, ok := curObjs[k]; (ok && objs[i] != want) || (!ok && objs[i] != nil) {
				t.Fatalf("%s %s: the change gives %v, the snapshot %v", kind, k, objs[i], want)
			}
		}
		for k, o := range oldObjs {
			if curObjs[k] != o && !named[k] {
				t.Fatalf("%s %s changed or went, unnamed", kind, k)
			}
		}
		for k := range curObjs {
			if _, ok := oldObjs[k]; !ok && !named[k] {
				t.Fatalf("%s %s added, unnamed", kind, k)
			}
		}
	}
	byKey := func(s *Snapshot) (nodes, jobs, tasks map[string]any) {
		nodes, jobs, tasks = map[string]any{}, map[string]any{}, map[string]any{}
		for _, n := range s.Nodes() {
			nodes[n.Name] = n
		}
		for _, j := range s.Jobs() {
			jobs[j.Key()] = j
		}
		for _, x := range s.Tasks() {
			tasks[x.Key()] = x
		}
		return
	}
	on, oj, ot := byKey(old)
	cn, cj, ct := byKey(cur)
	keysOf := func(n int, key func(int) string, obj func(int) any) ([]string, []any) {
		ks, os := make([]string, n), make([]any, n)
		for i := range n {
			ks[i], os[i] = key(i), obj(i)
		}
		return ks, os
	}
	ks, os := keysOf(len(c.Nodes), func(i int) string { return c.Nodes[i].Key }, func(i int) any {
		if c.Nodes[i].Obj == nil {
			return nil
		}
		return c.Nodes[i].Obj
	})
	check("node", on, cn, ks, os)
	ks, os = keysOf(len(c.Jobs), func(i int) string { return c.Jobs[i].Key }, func(i int) any {
		if c.Jobs[i].Obj == nil {
			return nil
		}
		return c.Jobs[i].Obj
	})
	check("job", oj, cj, ks, os)
	ks, os = keysOf(len(c.Tasks), func(i int) string { return c.Tasks[i].Key }, func(i int) any {
		if c.Tasks[i].Obj == nil {
			return nil
		}
		return c.Tasks[i].Obj
	})
	check("task", ot, ct, ks, os)
}

// TestChangesSinceNamesEveryChange writes at random (batches that add, replace and delete
// nodes, jobs and tasks, deleting a job with its tasks, refused batches, plan-commit style
// updates, now and then a ReplaceAll) and checks, from snapshots taken along the way, that
// ChangesSince names every object that differs, and answers false once the log no longer
// reaches back (bounds, ReplaceAll, another cluster).
func TestChangesSinceNamesEveryChange(t *testing.T) {
	for seed := range uint64(6) {
		rng := rand.New(rand.NewPCG(seed, 3))
		s := New()
		revisions := 1 + rng.IntN(8)
		s.LimitChangeLog(revisions, 40+rng.IntN(60))
		var kept []*Snapshot
		serial, reached := 0, 0
		for step := range 300 {
			snap := s.Snapshot("c")
			nodes, jobs, tasks := snap.Nodes(), snap.Jobs(), snap.Tasks()
			var b Batch
			for range 1 + rng.IntN(4) {
				serial++
				name := strconv.Itoa(serial)
				switch op := rng.IntN(9); {
				case op == 0 || len(nodes) == 0:
					b.Changes = append(b.Changes, node("n"+name))
				case op == 1:
					b.Changes = append(b.Changes, del(KindNode, "", nodes[rng.IntN(len(nodes))].Name))
				case op == 2 || len(jobs) == 0:
					b.Changes = append(b.Changes, job("ns", "j"+name, "default"), pendingTask("ns", "t"+name, "j"+name))
				case op == 3:
					j := jobs[rng.IntN(len(jobs))]
					b.Changes = append(b.Changes, del(KindJob, j.Namespace, j.Name))
				case op == 4 && len(tasks) > 0:
					x := tasks[rng.IntN(len(tasks))]
					b.Changes = append(b.Changes, del(KindTask, x.Namespace, x.Name))
				case op == 5 && len(tasks) > 0:
					x := *tasks[rng.IntN(len(tasks))]
					x.Status, x.Node = api.Running, nodes[rng.IntN(len(nodes))].Name
					b.Changes = append(b.Changes, Change{Task: &x})
				default:
					j := jobs[rng.IntN(len(jobs))]
					b.Changes = append(b.Changes, pendingTask(j.Namespace, "t"+name, j.Name))
				}
			}
			if rng.IntN(40) == 0 {
				b.ReplaceAll = true
				b.Changes = append(b.Changes, node("n0"))
			}
			if rng.IntN(5) == 0 {
				_, _ = s.Update("c", func(tx *Txn) error {
					for _, c := range b.Changes {
						_ = tx.Upsert(c) // some fail and are taken back
					}
					return nil
				})
			} else {
				_, _ = s.Apply("c", b) // a refused batch changes nothing
			}
			if step%3 == 0 {
				_, _ = s.Apply("other", Batch{Changes: []Change{node("x" + strconv.Itoa(step))}})
			}
			cur := s.Snapshot("c")
			kept = append(kept, snap)
			if len(kept) > 12 {
				kept = kept[1:]
			}
			for _, old := range kept {
				c, ok := cur.ChangesSince(old.Mark())
				if !ok {
					continue
				}
				reached++
				checkChanges(t, old, cur, c)
			}
			if _, ok := cur.ChangesSince(s.Snapshot("other").Mark()); ok {
				t.Fatalf("another cluster's mark was reached")
			}
			if old := kept[0]; cur.Revision()-old.Revision() > uint64(revisions) {
				if _, ok := cur.ChangesSince(old.Mark()); ok {
					t.Fatalf("seed %d step %d: the log reached back %d revisions, beyond its bound of %d", seed, step, cur.Revision()-old.Revision(), revisions)
				}
			}
		}
		if reached < 100 {
			t.Fatalf("seed %d: the log reached back only %d times", seed, reached)
		}
	}
}
