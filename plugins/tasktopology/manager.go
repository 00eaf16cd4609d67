package tasktopology

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// Job annotations.
const (
	AnnotationAffinity     = "volcano.sh/task-topology-affinity"
	AnnotationAntiAffinity = "volcano.sh/task-topology-anti-affinity"
	AnnotationTaskOrder    = "volcano.sh/task-topology-task-order"
)

// Role priorities by kind of topology; a role takes the highest of its kinds.
const (
	prioInterAntiAffinity = 1
	prioSelfAffinity      = 2
	prioInterAffinity     = 3
	prioSelfAntiAffinity  = 4
)

// outOfBucket marks a task that belongs to no bucket.
const outOfBucket = -1

// topology is what a job's annotations ask for.
type topology struct {
	affinity, antiAffinity [][]string
	taskOrder              []string
}

// readTopology parses a job's annotations; nil when it has none of them.
func readTopology(j *api.JobInfo) (*topology, error) {
	ann := j.Spec.Annotations
	aff, hasAff := ann[AnnotationAffinity]
	anti, hasAnti := ann[AnnotationAntiAffinity]
	order, hasOrder := ann[AnnotationTaskOrder]
	if !hasAff && !hasAnti && !hasOrder {
		return nil, nil
	}
	roles := map[string]bool{}
	for _, t := range j.Tasks {
		roles[t.Role] = true
	}
	topo := &topology{}
	var err error
	if hasAff {
		if topo.affinity, err = splitGroups(roles, AnnotationAffinity, aff); err != nil {
			return nil, err
		}
	}
	if hasAnti {
		if topo.antiAffinity, err = splitGroups(roles, AnnotationAntiAffinity, anti); err != nil {
			return nil, err
		}
	}
	if hasOrder {
		topo.taskOrder = strings.Split(order, ",")
		if err := checkGroups(roles, AnnotationTaskOrder, [][]string{topo.taskOrder}); err != nil {
			return nil, err
		}
	}
	return topo, nil
}

func splitGroups(roles map[string]bool, key, value string) ([][]string, error) {
	parts := strings.Split(value, ";")
	groups := make([][]string, len(parts))
	for i, p := range parts {
		groups[i] = strings.Split(p, ",")
	}
	return groups, checkGroups(roles, key, groups)
}

// checkGroups is Volcano's affinityCheck: every non-empty role must exist in the job and
// appear at most once per group.
func checkGroups(roles map[string]bool, key string, groups [][]string) error {
	for _, g := range groups {
		seen := map[string]bool{}
		for _, r := range g {
			if r == "" {
				continue
			}
			if !roles[r] {
				return fmt.Errorf("%s: role %q is not in the job", key, r)
			}
			if seen[r] {
				return fmt.Errorf("%s: role %q is repeated in a group", key, r)
			}
			seen[r] = true
		}
	}
	return nil
}

// relation is a set of role pairs.
type relation map[string]map[string]struct{}

func (r relation) add(a, b string) {
	m, ok := r[a]
	if !ok {
		m = map[string]struct{}{}
		r[a] = m
	}
	m[b] = struct{}{}
}

func (r relation) has(a, b string) bool { _, ok := r[a][b]; return ok }

// jobManager holds one job's buckets and role relations (Volcano's JobManager).
type jobManager struct {
	buckets []*bucket
	// bucketOf maps a task UID to its bucket index or outOfBucket; roleOf a bucketed task's
	// UID to its role.
	bucketOf map[string]int
	roleOf   map[string]string

	priority  map[string]int // role -> highest topology priority
	order     map[string]int // role -> user order (higher first)
	interAff  relation
	selfAff   map[string]struct{}
	interAnti relation
	selfAnti  map[string]struct{}

	// bucketMaxSize is the largest bucket's task count when buckets were built.
	bucketMaxSize int
	// nodeRoles counts, per node, the tasks of the job allocated there this cycle, by role.
	nodeRoles map[string]map[string]int
}

func newJobManager() *jobManager {
	return &jobManager{
		bucketOf: map[string]int{}, roleOf: map[string]string{},
		priority: map[string]int{}, order: map[string]int{},
		interAff: relation{}, selfAff: map[string]struct{}{},
		interAnti: relation{}, selfAnti: map[string]struct{}{},
		nodeRoles: map[string]map[string]int{},
	}
}

func (m *jobManager) mark(role string, prio int) {
	if prio > m.priority[role] {
		m.priority[role] = prio
	}
}

// apply turns the annotations into relations and priorities.
func (m *jobManager) apply(t *topology) {
	for _, g := range t.affinity {
		if len(g) == 1 {
			m.selfAff[g[0]] = struct{}{}
			m.mark(g[0], prioSelfAffinity)
			continue
		}
		for i, src := range g {
			for _, dst := range g[:i] {
				m.interAff.add(src, dst)
				m.interAff.add(dst, src)
			}
			m.mark(src, prioInterAffinity)
		}
	}
	for _, g := range t.antiAffinity {
		if len(g) == 1 {
			m.selfAnti[g[0]] = struct{}{}
			m.mark(g[0], prioSelfAntiAffinity)
			continue
		}
		for i, src := range g {
			for _, dst := range g[:i] {
				m.interAnti.add(src, dst)
				m.interAnti.add(dst, src)
			}
			m.mark(src, prioInterAntiAffinity)
		}
	}
	for i, role := range t.taskOrder {
		m.order[role] = len(t.taskOrder) - i
	}
}

// affinity scores a role against a multiset of roles: +n for n affine tasks (unless onlyAnti),
// -n for n anti-affine ones.
func (m *jobManager) affinity(role string, roles map[string]int, onlyAnti bool) int {
	if role == "" {
		return 0
	}
	score := 0
	for other, n := range roles {
		same := other == role
		if !onlyAnti {
			var aff bool
			if same {
				_, aff = m.selfAff[role]
			} else {
				aff = m.interAff.has(role, other)
			}
			if aff {
				score += n
			}
		}
		var anti bool
		if same {
			_, anti = m.selfAnti[role]
		} else {
			anti = m.interAnti.has(role, other)
		}
		if anti {
			score -= n
		}
	}
	return score
}

// roleOrder compares two bucketed tasks' roles: >0 when l's role goes first.
func (m *jobManager) roleOrder(l, r *api.TaskInfo) int {
	lr, rr := m.roleOf[l.UID], m.roleOf[r.UID]
	if lr == rr {
		return 0
	}
	if lo, ro := m.order[lr], m.order[rr]; lo != ro {
		return cmpInt(lo, ro)
	}
	return cmpInt(m.priority[lr], m.priority[rr])
}

func cmpInt(a, b int) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

// build puts the job's tasks into buckets.
func (m *jobManager) build(j *api.JobInfo) {
	var tasks []*api.TaskInfo
	for _, t := range j.SortedTasks() {
		if _, ok := m.priority[t.Role]; t.Role == "" || !ok {
			m.bucketOf[t.UID] = outOfBucket
			continue
		}
		m.roleOf[t.UID] = t.Role
		tasks = append(tasks, t)
	}
	// Tasks on nodes first (by node), then by role order, priority, and name.
	sort.SliceStable(tasks, func(a, b int) bool {
		l, r := tasks[a], tasks[b]
		ln, rn := nodeOf(l), nodeOf(r)
		if (ln != "") != (rn != "") {
			return ln != ""
		}
		if ln != "" {
			return ln < rn
		}
		if c := m.roleOrder(l, r); c != 0 {
			return c > 0
		}
		return l.Name < r.Name
	})
	byNode := map[string]*bucket{}
	for _, t := range tasks {
		node := nodeOf(t)
		var chosen *bucket
		best := math.MinInt32
		if node != "" {
			best = 0
			chosen = byNode[node]
		} else {
			for _, b := range m.buckets {
				s := m.affinity(t.Role, b.roles, false)
				if s > best {
					best, chosen = s, b
				} else if s == best && chosen != nil && b.reqScore < chosen.reqScore {
					chosen = b
				}
			}
		}
		if best < 0 || chosen == nil {
			chosen = &bucket{index: len(m.buckets), tasks: map[string]*api.TaskInfo{}, roles: map[string]int{}, request: api.EmptyResource(), nodes: map[string]int{}}
			m.buckets = append(m.buckets, chosen)
			if node != "" {
				byNode[node] = chosen
			}
		}
		m.bucketOf[t.UID] = chosen.index
		chosen.add(t, node)
		if size := len(chosen.tasks) + chosen.bound; size > m.bucketMaxSize {
			m.bucketMaxSize = size
		}
	}
}

// nodeOf is the node a task is on as Volcano sees it: finished tasks keep the node they ran
// on.
func nodeOf(t *api.TaskInfo) string {
	if t.NodeName == "" && api.Terminated(t.Status) && t.Spec != nil {
		return t.Spec.Node
	}
	return t.NodeName
}

// bucketOfTask returns the task's bucket, nil when it has none.
func (m *jobManager) bucketOfTask(t *api.TaskInfo) *bucket {
	i, ok := m.bucketOf[t.UID]
	if !ok || i == outOfBucket {
		return nil
	}
	return m.buckets[i]
}

// bound follows an allocation of one of the job's tasks.
func (m *jobManager) bound(t *api.TaskInfo) {
	if t.Role != "" {
		roles, ok := m.nodeRoles[t.NodeName]
		if !ok {
			roles = map[string]int{}
			m.nodeRoles[t.NodeName] = roles
		}
		roles[t.Role]++
	}
	if b := m.bucketOfTask(t); b != nil {
		b.bound1(t)
	}
}

// bucket is a group of tasks meant to share a node.
type bucket struct {
	index int
	// tasks are the pending tasks by UID; pending lists them in UID order.
	tasks   map[string]*api.TaskInfo
	pending []*api.TaskInfo
	roles   map[string]int
	// reqScore weighs the pending tasks' requests: 1 milli-CPU = 1 MiB = 1 milli-unit.
	reqScore float64
	request  *api.Resource
	bound    int
	nodes    map[string]int
}

func (b *bucket) add(t *api.TaskInfo, node string) {
	b.roles[t.Role]++
	if node != "" {
		b.nodes[node]++
		b.bound++
		return
	}
	b.tasks[t.UID] = t
	i := sort.Search(len(b.pending), func(i int) bool { return b.pending[i].UID >= t.UID })
	b.pending = append(b.pending, nil)
	copy(b.pending[i+1:], b.pending[i:])
	b.pending[i] = t
	b.reqScore += reqScore(t.Resreq)
	b.request.Add(t.Resreq)
}

// bound1 is Volcano's Bucket.TaskBound: the request is taken out even when the task was not
// pending in the bucket.
func (b *bucket) bound1(t *api.TaskInfo) {
	b.nodes[t.NodeName]++
	b.bound++
	if _, ok := b.tasks[t.UID]; ok {
		delete(b.tasks, t.UID)
		for i, p := range b.pending {
			if p.UID == t.UID {
				b.pending = append(b.pending[:i], b.pending[i+1:]...)
				break
			}
		}
	}
	b.reqScore -= reqScore(t.Resreq)
	b.request.Sub(t.Resreq)
}

func reqScore(r *api.Resource) float64 {
	s := r.MilliCPU + r.Memory/1024/1024
	for _, n := range r.ScalarNames() {
		s += r.Scalars[n]
	}
	return s
}
