package framework

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/sluice-sched/sluice/engine/api"
)

// viewSet is what a session's views of nodes and jobs are made of: built from a snapshot by
// buildViews, or kept between cycles by Views.
type viewSet struct {
	// classes gives each priority class's value.
	classes map[string]int32
	// nodes, nodeList (sorted by name, each node's position set) and nodeIndex hold the same
	// node views; total sums their allocatable, in nodeList's order.
	nodes     map[string]*api.NodeInfo
	nodeList  []*api.NodeInfo
	nodeIndex map[string]int32
	total     *api.Resource
	// jobs holds the job views by UID; jobList holds them sorted by UID when known (nil: not
	// kept).
	jobs    map[string]*api.JobInfo
	jobList []*api.JobInfo
	// initialPhase is each job's phase as the snapshot has it.
	initialPhase map[string]api.JobPhase
	// pending counts the snapshot's pending tasks when buildViews built the set.
	pending int
	// arena, when set, provides the task views addTask makes.
	arena *api.TaskInfoArena
}

// resolvePriority gives a priority class's value, else an explicit priority, else dflt.
func resolvePriority(classes map[string]int32, class string, prio int32, has bool, dflt int32) int32 {
	if class != "" {
		if v, ok := classes[class]; ok {
			return v
		}
	}
	if has {
		return prio
	}
	return dflt
}

// buildViews builds the views of every node and job of the snapshot, each running task on its
// node, as a session sees them when it opens, the task views taken from arena (nil: each
// allocated alone, as views kept between cycles are). It pauses at the session's checkpoints
// and stops, with the context's error, once the session is interrupted.
func (s *Session) buildViews(snap *Snapshot, arena *api.TaskInfoArena) (*viewSet, error) {
	snap.objects()
	v := &viewSet{
		arena:        arena,
		classes:      make(map[string]int32, len(snap.PriorityClasses)),
		nodes:        make(map[string]*api.NodeInfo, len(snap.Nodes)),
		nodeList:     make([]*api.NodeInfo, 0, len(snap.Nodes)),
		total:        api.EmptyResource(),
		jobs:         make(map[string]*api.JobInfo, len(snap.Jobs)),
		initialPhase: make(map[string]api.JobPhase, len(snap.Jobs)),
	}
	for _, pc := range snap.PriorityClasses {
		v.classes[pc.Name] = pc.Value
	}
	for i, n := range snap.Nodes {
		if i%openCheckpointEvery == 0 {
			s.pacer.checkpoint()
		}
		ni := api.NewNodeInfo(n)
		v.nodes[n.Name] = ni
		v.nodeList = append(v.nodeList, ni)
		v.total.Add(ni.Allocatable)
	}
	sort.Slice(v.nodeList, func(i, j int) bool { return v.nodeList[i].Name < v.nodeList[j].Name })
	v.index()
	for i, j := range snap.Jobs {
		if i%openCheckpointEvery == 0 {
			s.pacer.checkpoint()
		}
		ji := api.NewJobInfo(j, resolvePriority(v.classes, j.PriorityClass, j.Priority, j.HasPriority, 0))
		v.jobs[ji.UID] = ji
		v.initialPhase[ji.UID] = ji.Phase
	}
	jobs, err := v.jobsOf(s, snap.Tasks)
	if err != nil {
		return nil, err
	}
	for i, t := range snap.Tasks {
		if i%openCheckpointEvery == 0 {
			s.pacer.checkpoint()
		}
		if i&4095 == 4095 {
			if err := s.Err(); err != nil {
				return nil, err // a large cluster's open stops soon after an interruption too
			}
		}
		ti := v.addTask(jobs[i], t)
		if ti.Status == api.Pending {
			v.pending++
		}
		if ti.NodeName == "" {
			continue
		}
		ni, ok := v.nodes[ti.NodeName]
		if !ok {
			return nil, fmt.Errorf("task %s is on missing node %s", ti.UID, ti.NodeName)
		}
		ni.AddExistingTask(ti)
	}
	v.arena = nil
	return v, nil
}

// jobsOf returns each task's job view, in the tasks' order, and sizes every job view for its
// tasks (so that its task map and order are made once, not grown task by task).
func (v *viewSet) jobsOf(s *Session, tasks []*api.Task) ([]*api.JobInfo, error) {
	out := make([]*api.JobInfo, len(tasks))
	counts := make(map[*api.JobInfo]int, len(v.jobs))
	var key []byte
	for i, t := range tasks {
		if i%openCheckpointEvery == 0 {
			s.pacer.checkpoint()
		}
		key = append(append(append(key[:0], t.Namespace...), '/'), t.Job...) // t.JobKey(), without allocating
		ji, ok := v.jobs[string(key)]
		if !ok {
			return nil, fmt.Errorf("task %s names missing job %s", t.Key(), t.JobKey())
		}
		out[i] = ji
		counts[ji]++
	}
	for ji, n := range counts {
		ji.ExpectTasks(n)
	}
	return out, nil
}

// addTask adds the view of a stored task to its job's view; a task that does not occupy its
// node gets no node.
func (v *viewSet) addTask(ji *api.JobInfo, t *api.Task) *api.TaskInfo {
	ti := v.arena.NewTaskInfoOf(t, resolvePriority(v.classes, t.PriorityClass, t.Priority, t.HasPriority, ji.Priority), ji.UID)
	ji.AddTaskInfo(ti)
	if !api.OccupiesNode(ti.Status) {
		ti.NodeName = ""
	}
	return ti
}

// index fills nodeIndex from nodeList and sets each node's position.
func (v *viewSet) index() {
	v.nodeIndex = make(map[string]int32, len(v.nodeList))
	for i, n := range v.nodeList {
		v.nodeIndex[n.Name] = int32(i)
		n.SetPosition(int32(i))
	}
}

// Views keeps one cluster's node and job views between cycles, so that a cycle costs what
// changed rather than what the cluster holds. A session opened with Options.Views patches
// them to its snapshot and uses them instead of building its own:
//
//   - An object is rebuilt when its stored version differs from the one its view was built
//     from. The store never changes an object in place (a write stores a new one), so a
//     pointer comparison tells; a deleted object's view goes. A job is rebuilt, with all its
//     tasks, when it or one of its tasks changed; a node is rebuilt, with all its running
//     tasks in key order (so that its sums are bit for bit a fresh build's), when it, one of
//     its tasks or the job of one of them was rebuilt.
//   - A cycle changes the views it uses (statements place and evict tasks; actions set job
//     phases and fit errors). When the session ends, every view it changed is marked (a node
//     whose Version moved; a job whose Version moved or whose phase or fit errors differ from
//     a fresh build's) and rebuilt at the next open, before anything reads it.
//
// So every session sees exactly the views a session built from its snapshot would see. That
// holds only while plugins change views through statements alone: OpenSession uses Views only
// when every configured plugin says so (ReusableViews).
//
// One session at a time uses Views; a session that finds them in use builds its own. The zero
// value is empty, ready to use.
type Views struct {
	busy atomic.Bool

	// set is nil until the first build.
	set *viewSet
	// classes, nodeSpecs (sorted by name, as set.nodeList), jobSpecs (sorted by key, as
	// set.jobList) and tasks (sorted by key) are the stored objects the views were built from.
	classes   []*api.PriorityClass
	nodeSpecs []*api.Node
	jobSpecs  []*api.Job
	tasks     []*api.Task
	// nodeVersion and jobVersion are each view's Version as built, by position in nodeList
	// and jobList (jobPosition finds a job's).
	nodeVersion []uint64
	jobVersion  []uint64
	// mark is the mark of the snapshot the views were last patched to (Snapshot.Mark).
	mark any
	// dirtyNodes and dirtyJobs name the views the last session changed.
	dirtyNodes map[string]bool
	dirtyJobs  map[string]bool
	// epoch counts refreshes; changes is what the last one rebuilt (Changes.All after a
	// whole build).
	epoch   uint64
	changes Changes
	// kept holds plugins' state kept between cycles (KeptState), by key.
	kept map[string]*keptEntry
	// activity indexes the job views by whether a cycle can have work for them.
	activity activity
}

// keptEntry is one plugin's state kept between cycles: valid for the refresh after the one
// numbered epoch (0: not valid).
type keptEntry struct {
	value any
	epoch uint64
}

// ReusableViews is implemented by a plugin that changes the session's node, job and task
// views only through statements (and a job's per-cycle fields: phase, fit errors), never in
// OnSessionOpen, an event handler or a callback, so that sessions may open on views kept
// between cycles (Views). It writes a job's per-cycle fields only on jobs a walk handed it
// (ActiveJobs, SortedJobs) or whose tasks its statements changed: a session that handed out
// only the active jobs looks at no other job when it ends. A session whose configuration has
// a plugin without it builds its views from the snapshot.
type ReusableViews interface {
	// ReusableViews marks the plugin; it is never called.
	ReusableViews()
}

// acquire takes the views for one session; false when another session has them.
func (v *Views) acquire() bool { return v.busy.CompareAndSwap(false, true) }

// Reset forgets every view, so that the next session builds them from its snapshot (a test
// hook, and what an inconsistency does).
func (v *Views) Reset() {
	v.set, v.classes, v.nodeSpecs, v.jobSpecs, v.tasks = nil, nil, nil, nil, nil
	v.nodeVersion, v.jobVersion, v.dirtyNodes, v.dirtyJobs = nil, nil, nil, nil
	v.mark = nil
	v.kept, v.changes = nil, Changes{}
	v.activity = activity{}
}

// refresh brings the views to the snapshot for session s, building them whole the first
// time or when priority classes changed. On error the views are reset.
func (v *Views) refresh(s *Session, snap *Snapshot) (err error) {
	defer func() {
		if err != nil {
			v.Reset()
		}
	}()
	v.epoch++
	v.changes = Changes{All: true}
	if v.set == nil || !slices.Equal(v.classes, snap.PriorityClasses) {
		set, err := s.buildViews(snap, nil)
		if err != nil {
			return err
		}
		v.set = set
		v.classes = snap.PriorityClasses
		v.nodeSpecs = snap.Nodes
		v.jobSpecs = snap.Jobs
		v.tasks = snap.Tasks
		v.mark = snap.Mark
		v.set.jobList = make([]*api.JobInfo, len(snap.Jobs))
		for i, j := range snap.Jobs {
			v.set.jobList[i] = v.set.jobs[j.Key()]
		}
		v.dirtyNodes, v.dirtyJobs = nil, nil
		v.stamp()
		v.activity.build(v.set.jobList)
		return nil
	}
	p := patch{v: v, snap: snap, jobs: map[string]bool{}, nodes: map[string]bool{}}
	for name := range v.dirtyNodes {
		p.nodes[name] = true
	}
	for key := range v.dirtyJobs {
		p.jobs[key] = true
	}
	v.dirtyNodes, v.dirtyJobs = nil, nil
	if err := p.apply(); err != nil {
		return err
	}
	v.changes = p.changes()
	v.activity.patch(v.changes.Jobs, v.set.jobs)
	return nil
}

// jobPosition returns the position in jobSpecs (and jobList) of the job with the key, by a
// binary search of the sorted specs: no index to rebuild when jobs come and go.
func (v *Views) jobPosition(key string) (int, bool) {
	i := sort.Search(len(v.jobSpecs), func(k int) bool { return compareJobKey(v.jobSpecs[k], key) >= 0 })
	return i, i < len(v.jobSpecs) && compareJobKey(v.jobSpecs[i], key) == 0
}

// compareJobKey compares j.Key() (namespace/name) with key, without building it.
func compareJobKey(j *api.Job, key string) int { return compareKey(j.Namespace, j.Name, key) }

// compareKey compares the key ns/name with key, without building it.
func compareKey(ns, name, key string) int {
	if len(key) < len(ns) || key[:len(ns)] != ns {
		if len(key) < len(ns) {
			if c := strings.Compare(ns[:len(key)], key); c != 0 {
				return c
			}
			return 1 // key is a proper prefix of the namespace
		}
		return strings.Compare(ns, key[:len(ns)])
	}
	rest := key[len(ns):]
	if rest == "" {
		return 1 // key is the namespace: shorter than namespace/name
	}
	if rest[0] != '/' {
		if '/' < rest[0] {
			return -1
		}
		return 1
	}
	return strings.Compare(name, rest[1:])
}

// stamp records every view's Version as it is now.
func (v *Views) stamp() {
	v.nodeVersion = make([]uint64, len(v.set.nodeList))
	for i, n := range v.set.nodeList {
		v.nodeVersion[i] = n.Version
	}
	v.jobVersion = make([]uint64, len(v.set.jobList))
	for i, j := range v.set.jobList {
		v.jobVersion[i] = j.Version()
	}
}

// release ends a session's use of the views: the views it changed are marked for the next
// refresh. changed are the positions of the nodes the session's statements changed
// (Session.NodeChanges): plugins that keep views (ReusableViews) and actions change node
// views only through statements, so the other nodes need no look. jobs are the positions of
// the jobs the session may have changed (Session.visited), or every job when allJobs.
func (v *Views) release(changed, jobs []int32, allJobs bool) {
	if v.set != nil {
		for _, i := range changed {
			if int(i) >= len(v.set.nodeList) {
				continue
			}
			if n := v.set.nodeList[i]; n.Version != v.nodeVersion[i] {
				if v.dirtyNodes == nil {
					v.dirtyNodes = map[string]bool{}
				}
				v.dirtyNodes[n.Name] = true
			}
		}
		if allJobs {
			for i := range v.set.jobList {
				v.releaseJob(i)
			}
		}
		for _, i := range jobs {
			v.releaseJob(int(i))
		}
	}
	v.busy.Store(false)
}

// releaseJob marks the job view at position i for the next refresh if a session changed it.
func (v *Views) releaseJob(i int) {
	if i >= len(v.set.jobList) {
		return
	}
	j := v.set.jobList[i]
	if j.Version() != v.jobVersion[i] || j.Phase != v.jobSpecs[i].Phase || j.JobFitErrors != "" || len(j.NodesFitErrors) > 0 {
		if v.dirtyJobs == nil {
			v.dirtyJobs = map[string]bool{}
		}
		v.dirtyJobs[j.UID] = true
	}
}

// patch is one refresh of kept views: the jobs and nodes to rebuild, by key and name.
type patch struct {
	v     *Views
	snap  *Snapshot
	jobs  map[string]bool
	nodes map[string]bool
	// total is set when a node was added, deleted or rebuilt: the sum of allocatable is
	// worked out again.
	total bool
	// rebuiltJobs and rebuiltNodes list the views rebuilt (or added); goneJobs and goneNodes
	// the views deleted.
	rebuiltJobs, rebuiltNodes, goneJobs, goneNodes []string
	// key is buildNode's buffer for keys.
	key []byte
	// placed lists, by node, the placed tasks of the jobs rebuilt, and dropped the tasks their
	// old views (and those of deleted jobs) placed there: patchNode removes these and adds
	// those.
	placed, dropped map[string][]*api.TaskInfo
	// logged, when the change log told what changed (fromLog) or nothing was written, holds
	// by job key the tasks that changed in or out of the job: its tasks are then its old
	// view's with these applied.
	logged map[string][]taskChange
}

// file appends a task to a node's list in m, making m when nil.
func file(m *map[string][]*api.TaskInfo, t *api.TaskInfo) {
	if *m == nil {
		*m = map[string][]*api.TaskInfo{}
	}
	(*m)[t.NodeName] = append((*m)[t.NodeName], t)
}

// changes returns what the patch rebuilt and deleted, for plugins' kept state.
func (p *patch) changes() Changes {
	jobs := append(p.rebuiltJobs, p.goneJobs...)
	nodes := append(p.rebuiltNodes, p.goneNodes...)
	slices.Sort(jobs)
	slices.Sort(nodes)
	return Changes{Jobs: slices.Compact(jobs), Nodes: slices.Compact(nodes), Total: p.total}
}

// apply finds what changed between the views' objects and the snapshot's, rebuilds it, and
// records the new objects. When the snapshot's mark is the views' (nothing was written since
// they were last patched), only what the last session changed is rebuilt, and the snapshot's
// objects are not even listed.
func (p *patch) apply() error {
	v, snap := p.v, p.snap
	set := v.set
	if snap.Mark == nil || snap.Mark != v.mark {
		if !p.fromLog() {
			snap.objects()
			p.diffTasks(v.tasks, snap.Tasks)
		}
		if p.diffNodes() {
			v.nodeSpecs = snap.Nodes
			set.nodeList = make([]*api.NodeInfo, len(snap.Nodes))
			for i, spec := range snap.Nodes {
				set.nodeList[i] = set.nodes[spec.Name] // nil for a new node, built below
				if set.nodeList[i] == nil {
					set.nodeList[i] = &api.NodeInfo{Name: spec.Name}
				}
			}
			set.index()
			// A kept view's Version now is its clean one: the views the last session
			// changed are marked and rebuilt below, which records theirs.
			v.nodeVersion = make([]uint64, len(snap.Nodes))
			for i, n := range set.nodeList {
				v.nodeVersion[i] = n.Version
			}
			p.total = true
		}
		if list, versions, moved := p.diffJobs(); moved {
			set.jobList, v.jobVersion = list, versions
		}
		v.nodeSpecs, v.jobSpecs, v.tasks, v.mark = snap.Nodes, snap.Jobs, snap.Tasks, snap.Mark
	} else {
		p.logged = map[string][]taskChange{} // nothing written: every job's tasks are its view's
	}
	// Jobs first: a node's view copies its tasks from their jobs' views.
	for key := range p.jobs {
		i, ok := v.jobPosition(key)
		if !ok {
			continue // deleted
		}
		spec := v.jobSpecs[i]
		if old := set.jobList[i]; old != nil {
			for _, t := range old.Tasks {
				if t.NodeName != "" {
					p.nodes[t.NodeName] = true
					file(&p.dropped, t)
				}
			}
		}
		ji := api.NewJobInfo(spec, resolvePriority(set.classes, spec.PriorityClass, spec.Priority, spec.HasPriority, 0))
		for _, t := range p.tasksOfJob(set.jobList[i], key) {
			if ti := set.addTask(ji, t); ti.NodeName != "" {
				p.nodes[ti.NodeName] = true
				file(&p.placed, ti)
			}
		}
		set.jobs[key] = ji
		set.jobList[i] = ji
		p.rebuiltJobs = append(p.rebuiltJobs, key)
		set.initialPhase[key] = ji.Phase
		v.jobVersion[i] = ji.Version()
	}
	for name := range p.nodes {
		i, ok := set.nodeIndex[name]
		if !ok {
			continue // deleted
		}
		ni := p.patchNode(v.nodeSpecs[i])
		if ni == nil {
			var err error
			if ni, err = p.buildNode(v.nodeSpecs[i]); err != nil {
				return err
			}
		}
		p.total = true
		p.rebuiltNodes = append(p.rebuiltNodes, name)
		set.nodes[name] = ni
		set.nodeList[i] = ni
		ni.SetPosition(i)
		v.nodeVersion[i] = ni.Version
	}
	if p.total {
		set.total = api.EmptyResource()
		for _, n := range set.nodeList {
			set.total.Add(n.Allocatable)
		}
	}
	return nil
}

// fromLog fills the snapshot's Nodes, Jobs and Tasks from the lists the views were patched
// to and the changes since (Snapshot.ChangesSince), without listing them, and marks the jobs
// and nodes of the changed tasks (as diffTasks would); false when the snapshot cannot tell
// what changed (or has its lists already).
func (p *patch) fromLog() bool {
	v, snap := p.v, p.snap
	if snap.Load == nil || snap.ChangesSince == nil || v.mark == nil {
		return false
	}
	ch, ok := snap.ChangesSince(v.mark)
	if !ok {
		return false
	}
	p.logged = map[string][]taskChange{}
	snap.Nodes = mergeChanged(v.nodeSpecs, ch.Nodes, func(n *api.Node, key string) int { return strings.Compare(n.Name, key) }, nil)
	snap.Jobs = mergeChanged(v.jobSpecs, ch.Jobs, func(j *api.Job, key string) int { return compareKey(j.Namespace, j.Name, key) }, nil)
	snap.Tasks = mergeChanged(v.tasks, ch.Tasks, func(t *api.Task, key string) int { return compareKey(t.Namespace, t.Name, key) },
		func(old, cur *api.Task) {
			if old != cur {
				p.markTask(old)
				p.markTask(cur)
				p.logTask(old, cur)
			}
		})
	snap.Load = nil
	return true
}

// mergeChanged returns the list old (sorted by key) with the changes (sorted by key) made:
// a changed object replaces the one with its key or is inserted, a deleted one goes. cmp
// compares an object's key with a key. changed, when given, is called with each change's old
// and new object (nil: none).
func mergeChanged[T any](old []*T, changes []api.Changed[T], cmp func(*T, string) int, changed func(old, cur *T)) []*T {
	if len(changes) == 0 {
		return old
	}
	out := make([]*T, 0, len(old)+len(changes))
	i := 0
	for _, c := range changes {
		j := i + gallop(len(old)-i, func(k int) bool { return cmp(old[i+k], c.Key) >= 0 })
		out = append(out, old[i:j]...)
		i = j
		var was *T
		if i < len(old) && cmp(old[i], c.Key) == 0 {
			was = old[i]
			i++
		}
		if c.Obj != nil {
			out = append(out, c.Obj)
		}
		if changed != nil {
			changed(was, c.Obj)
		}
	}
	return append(out, old[i:]...)
}

// gallop returns the first index in [0, n) at which f is true (n when none), f being false
// then true over the range, as sort.Search does, but in time logarithmic in the answer: the
// changes merged into a long sorted list are usually close to each other's place.
func gallop(n int, f func(int) bool) int {
	lo, hi := 0, 1
	for hi < n && !f(hi-1) {
		lo, hi = hi, min(2*hi, n)
	}
	if hi > n {
		hi = n
	}
	return lo + sort.Search(hi-lo, func(k int) bool { return f(lo + k) })
}

// taskChange is one changed task key's old and new task (nil: none).
type taskChange struct{ old, cur *api.Task }

// logTask notes a task's change for the jobs it was and is in.
func (p *patch) logTask(old, cur *api.Task) {
	c := taskChange{old, cur}
	if old != nil {
		k := old.JobKey()
		p.logged[k] = append(p.logged[k], c)
		if cur == nil || cur.Job == old.Job && cur.Namespace == old.Namespace {
			return // noted once for the job it stayed in
		}
	}
	k := cur.JobKey()
	p.logged[k] = append(p.logged[k], c)
}

// tasksOfJob returns the stored tasks of the job, in key order (as TasksOfJob lists them).
// When the change log told what changed, they are the tasks of its old view (nil: a new
// job) without those whose keys changed, and the changed ones now in the job: the old view
// was built from the tasks stored then, none of which changed since unannounced (a refresh
// rebuilds the job of every changed task), and a new job's tasks were all stored after the
// last refresh (the store keeps no task without its job).
func (p *patch) tasksOfJob(old *api.JobInfo, key string) []*api.Task {
	if p.logged == nil {
		return p.snap.TasksOfJob(key)
	}
	changed := p.logged[key]
	n := len(changed)
	if old != nil {
		n += len(old.Tasks)
	}
	byKey := make(map[string]*api.Task, n)
	if old != nil {
		for k, ti := range old.Tasks {
			byKey[k] = ti.Spec
		}
	}
	for _, c := range changed {
		if c.old != nil {
			delete(byKey, c.old.Key())
		}
		if c.cur != nil && c.cur.JobKey() == key {
			byKey[c.cur.Key()] = c.cur
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	tasks := make([]*api.Task, len(keys))
	for i, k := range keys {
		tasks[i] = byKey[k]
	}
	return tasks
}

// markTask marks the job and node of a task that changed (nil: none).
func (p *patch) markTask(t *api.Task) {
	if t == nil {
		return
	}
	p.jobs[t.JobKey()] = true
	if t.Node != "" {
		p.nodes[t.Node] = true
	}
}

// diffTasks marks the jobs and nodes of every task that was added, deleted or replaced
// between two task lists sorted by key.
func (p *patch) diffTasks(old, cur []*api.Task) {
	mark := p.markTask
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur):
			mark(old[i])
			i++
		case i == len(old):
			mark(cur[j])
			j++
		case old[i] == cur[j]:
			i++
			j++
		default:
			switch ko, kc := old[i].Key(), cur[j].Key(); {
			case ko == kc:
				mark(old[i])
				mark(cur[j])
				i++
				j++
			case ko < kc:
				mark(old[i])
				i++
			default:
				mark(cur[j])
				j++
			}
		}
	}
}

// diffNodes marks the nodes that were added or replaced, drops the views of deleted ones, and
// reports whether the list of names changed.
func (p *patch) diffNodes() (moved bool) {
	old, cur := p.v.nodeSpecs, p.snap.Nodes
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		switch {
		case j == len(cur) || (i < len(old) && old[i].Name < cur[j].Name):
			delete(p.v.set.nodes, old[i].Name)
			delete(p.nodes, old[i].Name)
			p.goneNodes = append(p.goneNodes, old[i].Name)
			moved = true
			i++
		case i == len(old) || cur[j].Name < old[i].Name:
			p.nodes[cur[j].Name] = true
			moved = true
			j++
		default:
			if old[i] != cur[j] {
				p.nodes[cur[j].Name] = true
			}
			i++
			j++
		}
	}
	return moved
}

// diffJobs marks the jobs that were added or replaced, drops the views of deleted ones (and
// marks the nodes of their tasks), and reports whether the list of keys changed. It returns
// the views and their versions in the new list's order: a kept view keeps its recorded
// version (the views the last session changed, whose versions moved, are rebuilt, as are
// replaced ones); a new job has none until it is built.
func (p *patch) diffJobs() (list []*api.JobInfo, versions []uint64, moved bool) {
	old, cur := p.v.jobSpecs, p.snap.Jobs
	set := p.v.set
	list, versions = make([]*api.JobInfo, 0, len(cur)), make([]uint64, 0, len(cur))
	i, j := 0, 0
	for i < len(old) || j < len(cur) {
		if i < len(old) && j < len(cur) && old[i] == cur[j] {
			list, versions = append(list, set.jobList[i]), append(versions, p.v.jobVersion[i])
			i++ // unchanged: no key to build
			j++
			continue
		}
		var ko, kc string
		if i < len(old) {
			ko = old[i].Key()
		}
		if j < len(cur) {
			kc = cur[j].Key()
		}
		switch {
		case j == len(cur) || (i < len(old) && ko < kc):
			p.dropJob(ko)
			moved = true
			i++
		case i == len(old) || kc < ko:
			p.jobs[kc] = true
			list, versions = append(list, nil), append(versions, 0)
			moved = true
			j++
		default:
			if old[i] != cur[j] {
				p.jobs[kc] = true
			}
			list, versions = append(list, set.jobList[i]), append(versions, p.v.jobVersion[i])
			i++
			j++
		}
	}
	return list, versions, moved
}

// dropJob drops a deleted job's view and marks the nodes of its tasks.
func (p *patch) dropJob(key string) {
	set := p.v.set
	if ji := set.jobs[key]; ji != nil {
		for _, t := range ji.Tasks {
			if t.NodeName != "" {
				p.nodes[t.NodeName] = true
				file(&p.dropped, t)
			}
		}
	}
	delete(set.jobs, key)
	delete(set.initialPhase, key)
	delete(p.jobs, key)
	p.goneJobs = append(p.goneJobs, key)
}

// patchNode brings a node's kept view up to date in place, when the node itself is unchanged,
// instead of listing its tasks from the store: the tasks the rebuilt (and deleted) jobs' old
// views placed on it are removed, and the rebuilt jobs' placed tasks added (a changed task,
// and every task a session placed or evicted, has its job rebuilt; a node view's tasks are
// its jobs' views' placed tasks, statements keeping both alike). The sums change in another
// order than a fresh build adds them in, so the patch is taken only while the view's sums are
// exact (NodeInfo.SumsExact: integer amounts, no scalars, magnitudes under 2^53): they are
// then a fresh build's bit for bit, and so are the counts and, once Patched, Version. It
// returns nil when it cannot patch (the view may be left half patched: it is built afresh).
func (p *patch) patchNode(spec *api.Node) *api.NodeInfo {
	ni := p.v.set.nodes[spec.Name]
	if ni == nil || ni.Node != spec || len(spec.Devices) > 0 || !ni.SumsExact() {
		return nil // new, replaced, with devices, or inexact: built afresh
	}
	for _, t := range p.dropped[spec.Name] {
		ni.RemoveTask(t)
	}
	for _, t := range p.placed[spec.Name] {
		ni.AddExistingTask(t)
	}
	if !ni.SumsExact() {
		return nil
	}
	ni.Patched()
	return ni
}

// buildNode builds a node's view with its running tasks, in key order, copied from their jobs'
// views.
func (p *patch) buildNode(spec *api.Node) (*api.NodeInfo, error) {
	ni := api.NewNodeInfo(spec)
	for _, t := range p.snap.TasksOnNode(spec.Name) {
		// t.JobKey() and t.Key() without allocating: map lookups by string(bytes) do not copy.
		p.key = append(append(append(p.key[:0], t.Namespace...), '/'), t.Job...)
		ji := p.v.set.jobs[string(p.key)]
		if ji == nil {
			return nil, fmt.Errorf("task %s names missing job %s", t.Key(), t.JobKey())
		}
		p.key = append(append(append(p.key[:0], t.Namespace...), '/'), t.Name...)
		ti := ji.Tasks[string(p.key)]
		if ti == nil {
			return nil, fmt.Errorf("task %s is missing from its job's view", t.Key())
		}
		if ti.NodeName == spec.Name {
			ni.AddExistingTask(ti)
		}
	}
	return ni, nil
}

// Changes are what the refresh of a cluster's kept views (Views) changed since a plugin's
// kept state (KeptState) was last brought up to date: the state is patched for them.
type Changes struct {
	// All is set when the state is new, or cannot be patched: it is derived anew from every
	// view. Jobs, Nodes and Total are then empty.
	All bool
	// Jobs are the keys of the jobs whose views were rebuilt, added or deleted (a key that
	// Session.Jobs lacks was deleted), sorted. A rebuilt view is a new *api.JobInfo: views
	// not listed are the very ones the state was derived from.
	Jobs []string
	// Nodes are the names of the nodes whose views were rebuilt, added or deleted (a name
	// Session.Nodes lacks was deleted), sorted.
	Nodes []string
	// Total is set when Session.TotalResource may differ from the last session's.
	Total bool
}

// KeptState returns the state a plugin keeps for the session's cluster under key, alongside
// the kept views, and what changed in the views since it was last brought up to date. The
// plugin brings it up to date for the session's views at open, from the changes alone
// (Changes.All: from every view), and must treat it as read-only afterwards: a session's own
// changes go into state of the session's (copy-on-write), since the cycle's changes to the
// views are undone by the next refresh, which lists them.
//
// A session not on kept views gets a new zero state, Changes.All, and keeps nothing. A state
// becomes valid for the next session only when this one opened: a session that did not (an
// error, an interruption) or a refresh the plugin missed (a cycle without it) gives the next
// one a new state. Keys name the keeping package and what it keeps; one session gets one
// state per key, with the same changes at every call.
func KeptState[T any](s *Session, key string) (*T, Changes) {
	if h, ok := s.kept[key]; ok {
		if st, ok := h.value.(*T); ok {
			return st, h.changes
		}
	}
	st, ch := new(T), Changes{All: true}
	if v := s.views; v != nil {
		if e := v.kept[key]; e != nil && e.epoch != 0 && e.epoch+1 == v.epoch && !v.changes.All {
			if old, ok := e.value.(*T); ok {
				st, ch = old, v.changes
			}
		}
		if v.kept == nil {
			v.kept = map[string]*keptEntry{}
		}
		v.kept[key] = &keptEntry{value: st} // not valid until the session opened
	}
	if s.kept == nil {
		s.kept = map[string]handedState{}
	}
	s.kept[key] = handedState{value: st, changes: ch}
	return st, ch
}

// handedState is a kept state a session handed out, and the changes it came with.
type handedState struct {
	value   any
	changes Changes
}

// confirmKept makes the states the session handed out valid for the next refresh: called
// once every plugin opened.
func (s *Session) confirmKept() {
	if s.views == nil {
		return
	}
	for key := range s.kept {
		if e := s.views.kept[key]; e != nil {
			e.epoch = s.views.epoch
		}
	}
}

// KeptActionState returns the state an action keeps for the session's cluster under key,
// alongside the kept views, and what changed in the views since the last session that asked
// for it: the action brings the state up to date from the changes alone (Changes.All: from
// every view) as soon as it gets it, before any read. Unlike a plugin's KeptState, the state
// is valid for the next session at once, and the session's own changes go into it: the next
// refresh lists every view the session changed (and rebuilds it), so the next session learns
// of them from its Changes.
//
// A session not on kept views gets a new zero state and keeps nothing. A session on kept
// views that does not ask (a cycle without the action) gives the next one a new state. Keys
// name the keeping package and what it keeps; one session gets one state per key.
func KeptActionState[T any](s *Session, key string) (*T, Changes) {
	if h, ok := s.kept[key]; ok {
		if st, ok := h.value.(*T); ok {
			return st, Changes{} // brought up to date by the session's first call
		}
	}
	st, ch := new(T), Changes{All: true}
	if v := s.views; v != nil {
		if e := v.kept[key]; e != nil && e.epoch+1 == v.epoch && !v.changes.All {
			if old, ok := e.value.(*T); ok {
				st, ch = old, v.changes
			}
		}
		if v.kept == nil {
			v.kept = map[string]*keptEntry{}
		}
		v.kept[key] = &keptEntry{value: st, epoch: v.epoch}
	}
	if s.kept == nil {
		s.kept = map[string]handedState{}
	}
	s.kept[key] = handedState{value: st}
	return st, ch
}
