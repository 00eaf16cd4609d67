package tasktopology

import (
	"math"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "task-topology"

// ArgWeight is the node-order weight argument, as Volcano spells it.
const ArgWeight = "task-topology.weight"

// maxNodeScore is Kubernetes' framework.MaxNodeScore.
const maxNodeScore = 100

type plugin struct {
	weight int
	// managers holds, per job UID, the session's buckets.
	managers map[string]*jobManager
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin; a malformed weight is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	w, err := args.Int(ArgWeight, 1)
	if err != nil {
		return nil, err
	}
	return &plugin{weight: w}, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.managers = map[string]*jobManager{}
	for _, j := range ssn.SortedJobs() {
		if !j.HasPendingTasks() {
			continue
		}
		topo, err := readTopology(j)
		if err != nil {
			ssn.Log.Debug("task-topology ignores the job's annotations", "job", j.UID, "error", err)
			continue
		}
		if topo == nil {
			continue
		}
		m := newJobManager()
		m.apply(topo)
		m.build(j)
		p.managers[j.UID] = m
	}
	ssn.AddTaskOrderFn(Name, p.taskOrder)
	ssn.AddNodeOrderFn(Name, p.nodeOrder)
	// A task of a job with topology buckets scores by where its job's tasks went; any other
	// task scores nothing.
	ssn.AddClassKeyFn(Name, func(t *api.TaskInfo) (string, bool) {
		_, bucketed := p.managers[t.Job]
		return "", !bucketed
	})
	ssn.AddEventHandler(&framework.EventHandler{AllocateFunc: func(e *framework.Event) {
		if m, ok := p.managers[e.Task.Job]; ok {
			m.bound(e.Task)
		}
	}})
}

func (p *plugin) OnSessionClose(*framework.Session) { p.managers = nil }

// taskOrder is Volcano's TaskOrderFn: bucketed tasks first; within a job, larger buckets,
// then older ones; within a bucket, by role.
func (p *plugin) taskOrder(l, r *api.TaskInfo) int {
	lm, rm := p.managers[l.Job], p.managers[r.Job]
	if lm == nil || rm == nil {
		return 0
	}
	lb, rb := lm.bucketOfTask(l), rm.bucketOfTask(r)
	if (lb != nil) != (rb != nil) {
		if lb != nil {
			return -1
		}
		return 1
	}
	if l.Job != r.Job || lb == nil {
		return 0
	}
	if ln, rn := len(lb.tasks), len(rb.tasks); ln != rn {
		return -cmpInt(ln, rn)
	}
	if lb.index == rb.index {
		return -lm.roleOrder(l, r)
	}
	return cmpInt(lb.index, rb.index)
}

func (p *plugin) nodeOrder(task *api.TaskInfo, node *api.NodeInfo) (float64, error) {
	score, m := p.bucketScore(task, node)
	f := float64(score * p.weight)
	if m != nil && m.bucketMaxSize != 0 {
		f = f * maxNodeScore / float64(m.bucketMaxSize)
	}
	return f, nil
}

// bucketScore is Volcano's calcBucketScore; the manager is nil when the node cannot hold the
// task or the job has no buckets.
func (p *plugin) bucketScore(task *api.TaskInfo, node *api.NodeInfo) (int, *jobManager) {
	if lessPartly(node.Idle, node.Releasing, task.Resreq) {
		return 0, nil
	}
	m, ok := p.managers[task.Job]
	if !ok {
		return 0, nil
	}
	b := m.bucketOfTask(task)
	if b == nil {
		return 0, m
	}
	score := b.nodes[node.Name]
	if roles := m.nodeRoles[node.Name]; roles != nil {
		if a := m.affinity(task.Role, roles, true); a < 0 {
			score += a
		}
	}
	score += len(b.tasks)
	if fits(b.request, node.Idle, node.Releasing) {
		return score, m
	}
	// Leave other pending tasks out, in name order, until the rest of the bucket fits.
	remains := b.request.Clone()
	for _, t := range b.pending {
		if t.UID == task.UID {
			continue
		}
		remains.Sub(t.Resreq)
		score--
		if fits(remains, node.Idle, node.Releasing) {
			break
		}
	}
	return score, m
}

// lessPartly reports whether idle+releasing is below req in some dimension (Volcano's
// LessPartly with missing dimensions as zero), without allocating.
func lessPartly(idle, rel, req *api.Resource) bool {
	if idle.MilliCPU+rel.MilliCPU < req.MilliCPU || idle.Memory+rel.Memory < req.Memory {
		return true
	}
	below := func(name string) bool { return idle.Scalars[name]+rel.Scalars[name] < req.Scalars[name] }
	for n := range req.Scalars {
		if below(n) {
			return true
		}
	}
	for n := range idle.Scalars {
		if below(n) {
			return true
		}
	}
	for n := range rel.Scalars {
		if below(n) {
			return true
		}
	}
	return false
}

// fits reports whether r is at most idle+releasing in every dimension, within Volcano's
// tolerance (LessEqual with missing dimensions as zero), without allocating.
func fits(r, idle, rel *api.Resource) bool {
	leq := func(l, rr float64) bool { return l < rr || math.Abs(l-rr) < api.MinResource }
	if !leq(r.MilliCPU, idle.MilliCPU+rel.MilliCPU) || !leq(r.Memory, idle.Memory+rel.Memory) {
		return false
	}
	ok := func(name string) bool { return leq(r.Scalars[name], idle.Scalars[name]+rel.Scalars[name]) }
	for n := range r.Scalars {
		if !ok(n) {
			return false
		}
	}
	for n := range idle.Scalars {
		if !ok(n) {
			return false
		}
	}
	for n := range rel.Scalars {
		if !ok(n) {
			return false
		}
	}
	return true
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)
