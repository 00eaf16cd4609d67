package tdm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "tdm"

// Labels and annotations the plugin reads, as Volcano names them.
const (
	// RevocableZone is the node label naming the node's revocable zone, and the task
	// annotation that, set to "*", lets a task run in revocable zones.
	RevocableZone = "volcano.sh/revocable-zone"
	// Preemptable is the task annotation or label (annotation first) saying whether the task
	// may be evicted by tdm; on a job, whether the job is preemptable (job order, starving).
	// On a task, the annotation "true" also lets the task run in revocable zones.
	Preemptable = "volcano.sh/preemptable"
	// JDBMinAvailable and JDBMaxUnavailable are the job annotations of its disruption budget,
	// an integer or a percentage of the job's tasks; they bound how many of the job's tasks
	// tdm evicts at once.
	JDBMinAvailable   = "volcano.sh/jdb-min-available"
	JDBMaxUnavailable = "volcano.sh/jdb-max-unavailable"
)

// Arguments.
const (
	// ArgZonePrefix prefixes the arguments giving a zone's window: tdm.revocable-zone.<zone>:
	// "HH:MM-HH:MM".
	ArgZonePrefix = "tdm.revocable-zone."
	// ArgEvictPeriod is the least time between two searches for victims (default 1m).
	ArgEvictPeriod = "tdm.evict.period"
)

const (
	// defaultEvictPeriod is tdm.evict.period when it is not given.
	defaultEvictPeriod = time.Minute
	// defaultPodEvictNum is how many tasks of a job without a budget are evicted at once.
	defaultPodEvictNum = 1
	// maxNodeScore is the score of a usable revocable node for a task allowed there.
	maxNodeScore = 100.0
	// memoryKey is the key under which the session's memory keeps the last search for victims.
	memoryKey = Name + "/evict"
	// windowLayout is the layout of each end of a window.
	windowLayout = "15:04"
)

// window is a zone's daily active time, in minutes after midnight.
type window struct {
	raw        string
	start, end int
}

type plugin struct {
	zones map[string]window
	// zoneNames are the configured zones, sorted.
	zoneNames   []string
	evictPeriod time.Duration
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. Every tdm.revocable-zone.<zone> argument must be a
// window "H:MM-H:MM" and tdm.evict.period a duration that is not negative; Volcano panics on a
// value that is not a string, ignores a malformed period and treats a zone with a malformed
// window as never active.
func New(args conf.Arguments) (framework.Plugin, error) {
	p := &plugin{zones: map[string]window{}, evictPeriod: defaultEvictPeriod}
	for _, k := range args.Keys() {
		// As Volcano: any key containing the prefix, the zone being the key without it.
		if !strings.Contains(k, ArgZonePrefix) {
			continue
		}
		raw, err := args.String(k, "")
		if err != nil {
			return nil, err
		}
		w, err := parseWindow(raw)
		if err != nil {
			return nil, fmt.Errorf("argument %q: %w", k, err)
		}
		zone := strings.Replace(k, ArgZonePrefix, "", 1)
		if _, dup := p.zones[zone]; dup {
			return nil, fmt.Errorf("argument %q: zone %q is given twice", k, zone)
		}
		p.zones[zone] = w
		p.zoneNames = append(p.zoneNames, zone)
	}
	slices.Sort(p.zoneNames)
	d, err := args.Duration(ArgEvictPeriod, defaultEvictPeriod)
	if err != nil {
		return nil, err
	}
	if d < 0 {
		return nil, fmt.Errorf("argument %q: want a duration that is not negative, got %s", ArgEvictPeriod, d)
	}
	p.evictPeriod = d
	return p, nil
}

// parseWindow reads "H:MM-H:MM" as Volcano does: the text is trimmed, split at "-" into
// exactly two parts, each parsed with the layout "15:04" (hours of one or two digits, minutes
// of two).
func parseWindow(raw string) (window, error) {
	parts := strings.Split(strings.TrimSpace(raw), "-")
	if len(parts) != 2 {
		return window{}, fmt.Errorf("want a window such as \"10:00-21:00\", got %q", raw)
	}
	var mins [2]int
	for i, s := range parts {
		t, err := time.Parse(windowLayout, s)
		if err != nil {
			return window{}, fmt.Errorf("want a window such as \"10:00-21:00\", got %q: %v", raw, err)
		}
		mins[i] = t.Hour()*60 + t.Minute()
	}
	return window{raw: raw, start: mins[0], end: mins[1]}, nil
}

// bounds returns the window that Volcano checks at now: from the start today to the end today,
// or to the end tomorrow when the end is not after the start, in now's time zone.
func (w window) bounds(now time.Time) (start, end time.Time) {
	y, m, d := now.Date()
	loc := now.Location()
	start = time.Date(y, m, d, w.start/60, w.start%60, 0, 0, loc)
	if w.start >= w.end {
		end = time.Date(y, m, d+1, w.end/60, w.end%60, 0, 0, loc)
	} else {
		end = time.Date(y, m, d, w.end/60, w.end%60, 0, 0, loc)
	}
	return start, end
}

// active reports whether now is within the window, both ends included, to the second.
func (w window) active(now time.Time) bool {
	start, end := w.bounds(now)
	return now.Unix() >= start.Unix() && now.Unix() <= end.Unix()
}

// zoneError says why a zone is not usable at now; nil when it is active.
func (p *plugin) zoneError(zone string, now time.Time) error {
	w, ok := p.zones[zone]
	if !ok {
		return fmt.Errorf("revocable zone %s is not configured", zone)
	}
	if !w.active(now) {
		return fmt.Errorf("revocable zone %s is outside its window %s", zone, w.raw)
	}
	return nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPredicateFn(Name, func(task *api.TaskInfo, node *api.NodeInfo) error {
		zone := nodeZone(node)
		if zone == "" {
			return nil
		}
		if err := p.zoneError(zone, ssn.Now); err != nil {
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, err.Error())
		}
		if !revocable(task) {
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable,
				"task is not allowed in revocable zone "+zone)
		}
		return nil
	})
	ssn.AddNodeOrderFn(Name, func(task *api.TaskInfo, node *api.NodeInfo) (float64, error) {
		zone := nodeZone(node)
		if zone == "" {
			return 0, nil
		}
		if err := p.zoneError(zone, ssn.Now); err != nil {
			return 0, err
		}
		if !revocable(task) {
			return 0, nil
		}
		return maxNodeScore, nil
	})
	// Predicates and scores depend on the node, the session's clock and whether the task may
	// use revocable zones.
	ssn.AddClassKeyFn(Name, func(t *api.TaskInfo) (string, bool) {
		return fmt.Sprint(revocable(t)), true
	})
	ssn.AddPreemptableFn(Name, func(preemptor *api.TaskInfo, preemptees []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return p.preemptable(ssn, preemptor, preemptees)
	})
	ssn.AddVictimTasksFn(Name, func([]*api.TaskInfo) []*api.TaskInfo { return p.victims(ssn) })
	ssn.AddJobOrderFn(Name, func(l, r *api.JobInfo) int {
		lp, rp := jobPreemptable(l), jobPreemptable(r)
		switch {
		case lp == rp:
			return 0
		case !lp:
			return -1
		}
		return 1
	})
	ssn.AddJobPipelinedFn(Name, func(j *api.JobInfo) framework.Vote {
		if j.WaitingTaskNum()+j.ReadyTaskNum() >= j.MinAvailable {
			return framework.Permit
		}
		return framework.Reject
	})
	ssn.AddWakeUpFn(Name, func() (time.Time, bool) { return p.wakeUp(ssn) })
	ssn.AddJobStarvingFn(Name, func(j *api.JobInfo) bool {
		// A job that is not preemptable (e.g. an elastic deployment) may preempt.
		if jobPreemptable(j) {
			return false
		}
		return len(j.TaskStatusIndex[api.Pending]) > 0
	})
}

func (*plugin) OnSessionClose(*framework.Session) {}

// preemptable chooses victims for a preemptor: nothing (Reject) when the preemptor is itself
// preemptable or may use revocable zones; otherwise, per job, up to its budget of the running
// preemptable candidates on nodes outside revocable zones.
func (p *plugin) preemptable(ssn *framework.Session, preemptor *api.TaskInfo, preemptees []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
	if taskPreemptable(preemptor) || revocable(preemptor) {
		return nil, framework.Reject
	}
	g := newGroups()
	for _, t := range preemptees {
		if !taskPreemptable(t) || t.Status != api.Running {
			continue
		}
		node, ok := ssn.Nodes[t.NodeName]
		if !ok || nodeZone(node) != "" {
			continue
		}
		g.add(t)
	}
	return g.limit(ssn), framework.Permit
}

// victims chooses, at most once per eviction period, the running preemptable tasks to evict
// from the nodes of every configured zone that is outside its window, per zone and job up to
// the job's budget.
func (p *plugin) victims(ssn *framework.Session) []*api.TaskInfo {
	if last, ok := ssn.LastRun(memoryKey); ok && last.Add(p.evictPeriod).After(ssn.Now) {
		return nil
	}
	var victims []*api.TaskInfo
	for _, zone := range p.zoneNames {
		if p.zones[zone].active(ssn.Now) {
			continue
		}
		g := newGroups()
		for _, n := range ssn.NodeList {
			if nodeZone(n) != zone {
				continue
			}
			for _, t := range n.SortedTasks() {
				if taskPreemptable(t) && t.Status == api.Running {
					g.add(t)
				}
			}
		}
		victims = append(victims, g.limit(ssn)...)
	}
	ssn.SetLastRun(memoryKey, ssn.Now)
	return victims
}

// wakeUp is the next moment after the session's clock when a zone may turn active or inactive
// (nextChange) and, while some zone is outside its window, the end of the eviction period
// since the last victims were chosen.
func (p *plugin) wakeUp(ssn *framework.Session) (time.Time, bool) {
	at, found := p.nextChange(ssn.Now)
	inactive := false
	for _, zone := range p.zoneNames {
		inactive = inactive || !p.zones[zone].active(ssn.Now)
	}
	if last, ok := ssn.LastRun(memoryKey); ok && inactive {
		if t := last.Add(p.evictPeriod); t.After(ssn.Now) && (!found || t.Before(at)) {
			at, found = t, true
		}
	}
	return at, found
}

// nextChange is the first candidate after now for a change of some zone's activity: a
// window's start, the second after its end, and midnight, when the window checked moves to the
// next day; today's and tomorrow's candidates include the next change.
func (p *plugin) nextChange(now time.Time) (time.Time, bool) {
	var at time.Time
	found := false
	consider := func(t time.Time) {
		if t.After(now) && (!found || t.Before(at)) {
			at, found = t, true
		}
	}
	y, m, d := now.Date()
	loc := now.Location()
	for _, zone := range p.zoneNames {
		w := p.zones[zone]
		for day := 0; day <= 1; day++ {
			start, end := w.bounds(time.Date(y, m, d+day, 0, 0, 0, 0, loc))
			consider(start)
			consider(end.Add(time.Second))
			consider(time.Date(y, m, d+day+1, 0, 0, 0, 0, loc))
		}
	}
	return at, found
}

// groups gathers tasks by job, jobs in order of their first task.
type groups struct {
	order []string
	tasks map[string][]*api.TaskInfo
}

func newGroups() *groups { return &groups{tasks: map[string][]*api.TaskInfo{}} }

func (g *groups) add(t *api.TaskInfo) {
	if _, ok := g.tasks[t.Job]; !ok {
		g.order = append(g.order, t.Job)
	}
	g.tasks[t.Job] = append(g.tasks[t.Job], t)
}

// limit keeps, per job of the session, the first tasks up to the job's eviction budget.
func (g *groups) limit(ssn *framework.Session) []*api.TaskInfo {
	var out []*api.TaskInfo
	for _, id := range g.order {
		job, ok := ssn.Jobs[id]
		if !ok {
			continue
		}
		ts := g.tasks[id]
		n := min(maxEvictNum(job), len(ts))
		if n > 0 {
			out = append(out, ts[:n]...)
		}
	}
	return out
}

// maxEvictNum is how many of the job's tasks may be evicted at once, from its budget as
// Volcano's getMaxPodEvictNum: with max-unavailable, what it leaves after the tasks that are
// neither running nor finished; with min-available, the running tasks above it; otherwise (or
// when fewer than min-available run) one.
func maxEvictNum(job *api.JobInfo) int {
	running := len(job.TaskStatusIndex[api.Running])
	total := len(job.Tasks)
	minAvail, maxUnavail := budget(job)
	if maxUnavail != "" {
		limit := intOrPercent(maxUnavail, total)
		finished := len(job.TaskStatusIndex[api.Succeeded]) + len(job.TaskStatusIndex[api.Failed])
		unavailable := total - finished - running
		if unavailable >= limit {
			return 0
		}
		return limit - unavailable
	}
	if minAvail != "" {
		if m := intOrPercent(minAvail, total); running >= m {
			return running - m
		}
	}
	return defaultPodEvictNum
}

// budget reads the job's disruption budget annotations; min-available wins when both are set.
func budget(job *api.JobInfo) (minAvailable, maxUnavailable string) {
	if job.Spec == nil {
		return "", ""
	}
	if v, ok := job.Spec.Annotations[JDBMinAvailable]; ok {
		return v, ""
	}
	if v, ok := job.Spec.Annotations[JDBMaxUnavailable]; ok {
		return "", v
	}
	return "", ""
}

// intOrPercent reads an integer, or a percentage of total rounded up, as Kubernetes' intstr;
// anything else is 0.
func intOrPercent(s string, total int) int {
	if i, err := strconv.Atoi(s); err == nil {
		return i
	}
	pct, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(pct)
	if err != nil {
		return 0
	}
	return int(math.Ceil(float64(v) * float64(total) / 100))
}

// nodeZone is the node's revocable zone ("" for none).
func nodeZone(n *api.NodeInfo) string {
	if n.Node == nil {
		return ""
	}
	return n.Node.Labels[RevocableZone]
}

// revocable reports whether the task may run in revocable zones (Volcano's task.RevocableZone
// is "*"): its annotation volcano.sh/revocable-zone is "*"; without that annotation, its
// annotation volcano.sh/preemptable is true.
func revocable(t *api.TaskInfo) bool {
	ann := t.Annotations()
	if v, ok := ann[RevocableZone]; ok {
		return v == "*"
	}
	if v, ok := ann[Preemptable]; ok {
		b, err := strconv.ParseBool(v)
		return err == nil && b
	}
	return false
}

// taskPreemptable reads the task's volcano.sh/preemptable annotation, else its label (a value
// that is not a boolean is false), else the task's Preemptable field.
func taskPreemptable(t *api.TaskInfo) bool {
	if b, ok := boolKey(Preemptable, t.Annotations(), t.Labels()); ok {
		return b
	}
	return t.Preemptable
}

// jobPreemptable reads the job's volcano.sh/preemptable annotation, else its label; a job
// without either, or with a value that is not a boolean, is not preemptable (as Volcano).
func jobPreemptable(j *api.JobInfo) bool {
	if j.Spec == nil {
		return false
	}
	b, _ := boolKey(Preemptable, j.Spec.Annotations, j.Spec.Labels)
	return b
}

// boolKey reads key from the first map holding it; ok is false when none does.
func boolKey(key string, maps ...map[string]string) (value, ok bool) {
	for _, m := range maps {
		if v, found := m[key]; found {
			b, err := strconv.ParseBool(v)
			return err == nil && b, true
		}
	}
	return false, false
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)
