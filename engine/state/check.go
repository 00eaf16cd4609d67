package state

import (
	"fmt"

	"github.com/sluice-sched/sluice/engine/api"
)

// checkOp is a referential check queued by a change.
type checkOp uint8

const (
	// checkJob: the job's queue exists, or is "default" and gets created.
	checkJob checkOp = iota
	// checkTask: the task's job exists, and its node if it names one.
	checkTask
	// checkQueue: the queue's parent exists and the parent chain does not cycle.
	checkQueue
	// checkHyperNode: the members exist with the right kind and a lower tier, and every
	// hypernode listing this one has a higher tier.
	checkHyperNode
	// checkNodeGone: a deleted node (unless re-created) has no tasks and is in no hypernode.
	checkNodeGone
	// checkQueueGone: a deleted queue (unless re-created) has no jobs and no child queues.
	checkQueueGone
	// checkHyperNodeGone: a deleted hypernode (unless re-created) is in no hypernode.
	checkHyperNodeGone
)

// checkItem is one queued check: which change asked for it (the last one, when several
// touched the same object) and, for upserts, the row written and, for a task, its job's key.
type checkItem struct {
	index int
	op    checkOp
	key   string
	row   keyed
	ref   string
	dead  bool
}

type pendKey struct {
	op  checkOp
	key string
}

// pending is the set of checks a batch (or a Txn call) queued, one per object and check.
type pending struct {
	items []checkItem
	pos   map[pendKey]int
}

// add queues a check, or updates the queued one to the latest change and row.
func (p *pending) add(index int, op checkOp, key string, r keyed) {
	p.addRef(index, op, key, r, "")
}

// addRef is add for a check that also needs the key of the object the row refers to.
func (p *pending) addRef(index int, op checkOp, key string, r keyed, ref string) {
	if p.pos == nil {
		p.pos = make(map[pendKey]int)
	}
	it := checkItem{index: index, op: op, key: key, row: r, ref: ref}
	k := pendKey{op, key}
	if at, ok := p.pos[k]; ok {
		p.items[at] = it
		return
	}
	p.pos[k] = len(p.items)
	p.items = append(p.items, it)
}

// drop cancels a queued upsert check: the object was deleted again.
func (p *pending) drop(op checkOp, key string) {
	if at, ok := p.pos[pendKey{op, key}]; ok {
		p.items[at].dead = true
	}
}

func (p *pending) reset() {
	p.items = p.items[:0]
	clear(p.pos)
}

// checker runs the queued checks against the transaction's state, with per-run caches of
// what exists (the state does not change while it runs, except for the default queue it may
// create).
type checker struct {
	w      *writer
	nodes  map[string]bool
	jobs   map[string]bool
	queues map[string]bool
	// rooted holds queues whose parent chain is known to reach the top.
	rooted map[string]bool
	// first is the failure of the lowest change index.
	first *ValidationError
}

// check runs and clears the queued checks. It returns the ValidationError of the lowest
// change index, or an internal error. Job checks run first because they may create the
// default queue, which other checks then see whatever the order of the changes.
func (w *writer) check() error {
	defer w.pend.reset()
	if len(w.pend.items) == 0 {
		return nil
	}
	c := &checker{
		w:      w,
		nodes:  make(map[string]bool),
		jobs:   make(map[string]bool),
		queues: make(map[string]bool),
		rooted: make(map[string]bool),
	}
	for pass := 0; pass < 2; pass++ {
		for k := range w.pend.items {
			it := &w.pend.items[k]
			if it.dead || (it.op == checkJob) != (pass == 0) {
				continue
			}
			if err := c.run(it); err != nil {
				return err
			}
		}
	}
	if c.first != nil {
		return c.first
	}
	return nil
}

// fail records a violation, keeping the one of the lowest change index.
func (c *checker) fail(e *ValidationError) {
	if c.first == nil || e.Index < c.first.Index {
		c.first = e
	}
}

func (c *checker) run(it *checkItem) error {
	switch it.op {
	case checkJob:
		return c.job(it)
	case checkTask:
		return c.task(it)
	case checkQueue:
		return c.queue(it)
	case checkHyperNode:
		return c.hyperNode(it)
	case checkNodeGone:
		return c.nodeGone(it)
	case checkQueueGone:
		return c.queueGone(it)
	case checkHyperNodeGone:
		return c.hyperNodeGone(it)
	}
	return fmt.Errorf("state: unknown check %d", it.op)
}

// exists reports whether table has key, through cache.
func (c *checker) exists(cache map[string]bool, table, key string) (bool, error) {
	if ok, hit := cache[key]; hit {
		return ok, nil
	}
	r, err := c.w.get(table, key)
	if err != nil {
		return false, err
	}
	cache[key] = r != nil
	return r != nil, nil
}

// first returns the first row under a prefix of index, or nil.
func (c *checker) firstUnder(table, index string, args ...any) (keyed, error) {
	o, err := c.w.txn.First(table, index+"_prefix", args...)
	if err != nil {
		return nil, fmt.Errorf("state: reading %s by %s: %w", table, index, err)
	}
	if o == nil {
		return nil, nil
	}
	return o.(keyed), nil
}

func (c *checker) job(it *checkItem) error {
	r := it.row.(*row[api.Job])
	q := r.obj.Queue
	ok, err := c.exists(c.queues, tableQueues, q)
	if err != nil || ok {
		return err
	}
	if q != defaultQueue {
		c.fail(invalid(it.index, "job.queue", "queue %q of job %q does not exist", q, r.key))
		return nil
	}
	dq := &api.Queue{Name: defaultQueue, Weight: 1, State: api.QueueOpen, Reclaimable: true}
	if err := c.w.insert(tableQueues, dq.Name, newRow(c.w.cluster, dq.Name, dq, "", "")); err != nil {
		return err
	}
	c.queues[defaultQueue] = true
	return nil
}

func (c *checker) task(it *checkItem) error {
	r := it.row.(*row[api.Task])
	t := r.obj
	jobKey := it.ref
	ok, err := c.exists(c.jobs, tableJobs, jobKey)
	if err != nil {
		return err
	}
	if !ok {
		c.fail(invalid(it.index, "task.job", "job %q of task %q does not exist", jobKey, r.key))
		return nil
	}
	if t.Node == "" {
		return nil
	}
	ok, err = c.exists(c.nodes, tableNodes, t.Node)
	if err != nil {
		return err
	}
	if !ok {
		c.fail(invalid(it.index, "task.node", "node %q of task %q does not exist", t.Node, r.key))
	}
	return nil
}

// queue walks the parent chain up to the top (or to a queue known to reach it).
func (c *checker) queue(it *checkItem) error {
	q := it.row.(*row[api.Queue]).obj
	chain := []string{q.Name}
	for cur := q; ; {
		p := cur.Parent
		if p == "" || p == api.RootQueue || c.rooted[p] {
			break
		}
		for _, seen := range chain {
			if seen == p {
				c.fail(invalid(it.index, "queue.parent", "queue parents form a cycle: %s -> %s",
					joinChain(chain), p))
				return nil
			}
		}
		pr, err := c.w.get(tableQueues, p)
		if err != nil {
			return err
		}
		if pr == nil {
			if cur == q {
				c.fail(invalid(it.index, "queue.parent", "parent queue %q of queue %q does not exist",
					p, q.Name))
			} else {
				c.fail(invalid(it.index, "queue.parent", "ancestor queue %q (parent of %q) does not exist",
					p, cur.Name))
			}
			return nil
		}
		chain = append(chain, p)
		cur = pr.(*row[api.Queue]).obj
	}
	for _, name := range chain {
		c.rooted[name] = true
	}
	return nil
}

func joinChain(chain []string) string {
	s := ""
	for i, n := range chain {
		if i > 0 {
			s += " -> "
		}
		s += n
	}
	return s
}

func (c *checker) hyperNode(it *checkItem) error {
	r := it.row.(*row[api.HyperNode])
	h := r.obj
	for j, m := range h.Members {
		field := fmt.Sprintf("hyper_node.members[%d]", j)
		if h.Tier <= 1 {
			ok, err := c.exists(c.nodes, tableNodes, m)
			if err != nil {
				return err
			}
			if !ok {
				c.fail(invalid(it.index, field, "node %q does not exist (members of a tier-1 hypernode are nodes)", m))
				return nil
			}
			continue
		}
		mr, err := c.w.get(tableHyperNodes, m)
		if err != nil {
			return err
		}
		if mr == nil {
			c.fail(invalid(it.index, field, "hypernode %q does not exist (members of a tier-%d hypernode are hypernodes)",
				m, h.Tier))
			return nil
		}
		if mt := mr.(*row[api.HyperNode]).obj.Tier; mt >= h.Tier {
			c.fail(invalid(it.index, field, "member hypernode %q has tier %d, not lower than %d",
				m, mt, h.Tier))
			return nil
		}
	}
	parents, err := c.w.txn.Get(tableHyperNodes, indexMember+"_prefix", c.w.cluster, memberHyperNode, h.Name)
	if err != nil {
		return fmt.Errorf("state: reading hypernodes containing %q: %w", h.Name, err)
	}
	for o := parents.Next(); o != nil; o = parents.Next() {
		p := o.(*row[api.HyperNode]).obj
		if p.Tier <= h.Tier {
			c.fail(invalid(it.index, "hyper_node.tier", "hypernode %q (tier %d) has %q as a member, so its tier must be lower than %d",
				p.Name, p.Tier, h.Name, p.Tier))
			return nil
		}
	}
	return nil
}

func (c *checker) nodeGone(it *checkItem) error {
	if ok, err := c.exists(c.nodes, tableNodes, it.key); err != nil || ok {
		return err
	}
	t, err := c.firstUnder(tableTasks, indexNode, c.w.cluster, it.key)
	if err != nil {
		return err
	}
	if t != nil {
		c.fail(invalid(it.index, "delete", "node %q still has task %q; delete or move its tasks first",
			it.key, t.(*row[api.Task]).key))
		return nil
	}
	return c.memberGone(it, memberNode, "node")
}

func (c *checker) hyperNodeGone(it *checkItem) error {
	r, err := c.w.get(tableHyperNodes, it.key)
	if err != nil || r != nil {
		return err
	}
	return c.memberGone(it, memberHyperNode, "hypernode")
}

// memberGone fails if a hypernode still lists the deleted node or hypernode.
func (c *checker) memberGone(it *checkItem, kind, what string) error {
	h, err := c.firstUnder(tableHyperNodes, indexMember, c.w.cluster, kind, it.key)
	if err != nil {
		return err
	}
	if h != nil {
		c.fail(invalid(it.index, "delete", "%s %q is still a member of hypernode %q",
			what, it.key, h.(*row[api.HyperNode]).key))
	}
	return nil
}

func (c *checker) queueGone(it *checkItem) error {
	if ok, err := c.exists(c.queues, tableQueues, it.key); err != nil || ok {
		return err
	}
	j, err := c.firstUnder(tableJobs, indexQueue, c.w.cluster, it.key)
	if err != nil {
		return err
	}
	if j != nil {
		c.fail(invalid(it.index, "delete", "queue %q still has job %q", it.key, j.(*row[api.Job]).key))
		return nil
	}
	if it.key == api.RootQueue {
		return nil // children naming "root" are top-level whether or not it exists
	}
	child, err := c.firstUnder(tableQueues, indexParent, c.w.cluster, it.key)
	if err != nil {
		return err
	}
	if child != nil {
		c.fail(invalid(it.index, "delete", "queue %q still has child queue %q",
			it.key, child.(*row[api.Queue]).key))
	}
	return nil
}
