package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// Page sizes: every page reads at most this many objects of its list.
const (
	clustersPerPage  = 20
	jobsPerPage      = 50
	nodesPerPage     = 50
	tasksPerPage     = 100
	plansPerPage     = 50
	decisionsPerPage = 200
	// maxQueuePages bounds the queue tree: 5 pages of 1000 queues.
	maxQueuePages = 5
)

// link builds a UI path from its parts, each escaped, with a query.
func link(query url.Values, parts ...string) string {
	esc := make([]string, len(parts))
	for i, p := range parts {
		esc[i] = url.PathEscape(p)
	}
	s := Path + strings.Join(esc, "/")
	if len(query) > 0 {
		s += "?" + query.Encode()
	}
	return s
}

// clusterRow is one cluster's card.
type clusterRow struct {
	Name          string  `json:"name"`
	Link          string  `json:"link"`
	Revision      uint64  `json:"revision"`
	Nodes         int64   `json:"nodes"`
	Queues        int64   `json:"queues"`
	Jobs          int64   `json:"jobs"`
	Tasks         int64   `json:"tasks"`
	Plans         int64   `json:"plans"`
	JobsByPhase   []Count `json:"jobsByPhase"`
	TasksByStatus []Count `json:"tasksByStatus"`
	Utilization   []Bar   `json:"utilization"`
	HasConfig     bool    `json:"hasConfig"`
	ConfigEtag    string  `json:"configEtag"`
}

type clustersView struct {
	Clusters []clusterRow `json:"clusters"`
	// Next is the link to the next page of clusters ("" on the last).
	Next string `json:"next"`
}

func (u *UI) summaryRow(r *http.Request, id *service.Identity, name string) (clusterRow, error) {
	s, err := u.src.Summary(r.Context(), id, name)
	if err != nil {
		return clusterRow{}, err
	}
	c := s.Cluster
	return clusterRow{
		Name: c.GetName(), Link: link(nil, "c", c.GetName(), "queues"), Revision: c.GetRevision(),
		Nodes: c.GetObjects().GetNodes(), Queues: c.GetObjects().GetQueues(), Jobs: c.GetObjects().GetJobs(),
		Tasks: c.GetObjects().GetTasks(), Plans: c.GetPlans(),
		JobsByPhase:   counts(s.JobsByPhase, sluicev1.JobPhase_value, "JOB_PHASE_"),
		TasksByStatus: counts(s.TasksByStatus, sluicev1.TaskStatus_value, "TASK_STATUS_"),
		Utilization:   bars(s.Resources.Used, s.Resources.Allocatable, "pods"),
		HasConfig:     c.GetHasConfig(), ConfigEtag: c.GetConfigEtag(),
	}, nil
}

// clustersPage lists the clusters the credential may read, a page at a time.
func (u *UI) clustersPage(r *http.Request, id *service.Identity) (*view, error) {
	resp, err := u.src.ListClusters(r.Context(), id, &sluicev1.ListClustersRequest{PageSize: clustersPerPage, PageToken: r.URL.Query().Get("page")})
	if err != nil {
		return nil, err
	}
	v := clustersView{}
	for _, c := range resp.GetClusters() {
		row, err := u.summaryRow(r, id, c.GetName())
		if err != nil {
			continue // deleted since the list was read
		}
		v.Clusters = append(v.Clusters, row)
	}
	if t := resp.GetNextPageToken(); t != "" {
		v.Next = link(url.Values{"page": {t}})
	}
	return &view{template: "clusters", title: "Clusters", data: v}, nil
}

// clusterPage shows one cluster's card.
func (u *UI) clusterPage(r *http.Request, id *service.Identity) (*view, error) {
	c := r.PathValue("cluster")
	row, err := u.summaryRow(r, id, c)
	if err != nil {
		return nil, err
	}
	return &view{template: "clusters", title: c, cluster: c, data: clustersView{Clusters: []clusterRow{row}}}, nil
}

// queueRow is a queue in the tree.
type queueRow struct {
	Name   string `json:"name"`
	Parent string `json:"parent"`
	// Depth is the queue's depth in the tree (0 for a root); Indent its CSS class.
	Depth      int               `json:"depth"`
	Indent     string            `json:"indent"`
	Weight     int32             `json:"weight"`
	State      string            `json:"state"`
	Capability map[string]string `json:"capability"`
	Guarantee  map[string]string `json:"guarantee"`
	Deserved   map[string]string `json:"deserved"`
	Allocated  map[string]string `json:"allocated"`
	Share      string            `json:"share"`
	Overused   bool              `json:"overused"`
	Bars       []QueueBar        `json:"bars"`
}

type queuesView struct {
	Revision  uint64     `json:"revision"`
	Resources []string   `json:"resources"`
	Queues    []queueRow `json:"queues"`
	// Truncated is set when the cluster has more queues than the page shows.
	Truncated bool `json:"truncated"`
}

// queuesPage draws the queue hierarchy.
func (u *UI) queuesPage(r *http.Request, id *service.Identity) (*view, error) {
	c := r.PathValue("cluster")
	var qs []*sluicev1.Queue
	var v queuesView
	token := ""
	for range maxQueuePages {
		resp, err := u.src.ListQueues(r.Context(), id, &sluicev1.ListQueuesRequest{Cluster: c, PageSize: 1000, PageToken: token})
		if err != nil {
			return nil, err
		}
		qs = append(qs, resp.GetQueues()...)
		v.Revision = resp.GetRevision()
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	v.Truncated = token != ""
	var ms []map[string]string
	for _, q := range qs {
		ms = append(ms, q.GetStatus().GetAllocated(), q.GetStatus().GetDeserved(), q.GetGuarantee())
	}
	v.Resources = slices.DeleteFunc(resourceNames(ms...), func(n string) bool { return n == "pods" })
	scales := queueScales(qs, v.Resources)
	for _, q := range queueTree(qs) {
		row := queueRow{
			Name: q.q.GetName(), Parent: q.q.GetParent(), Depth: q.depth, Indent: fmt.Sprintf("d%d", min(q.depth, 9)),
			Weight: q.q.GetWeight(), State: enumWord(q.q.GetState().String(), "QUEUE_STATE_"),
			Capability: q.q.GetCapability(), Guarantee: q.q.GetGuarantee(),
			Deserved: q.q.GetStatus().GetDeserved(), Allocated: q.q.GetStatus().GetAllocated(),
			Share: q.q.GetStatus().GetShare(), Overused: q.q.GetStatus().GetOverused(),
		}
		for _, n := range v.Resources {
			row.Bars = append(row.Bars, QueueBar{Resource: n,
				Allocated: mark(row.Allocated, n, scales[n]), Deserved: mark(row.Deserved, n, scales[n]),
				Guarantee: mark(row.Guarantee, n, scales[n]), Capability: mark(row.Capability, n, scales[n])})
		}
		v.Queues = append(v.Queues, row)
	}
	return &view{template: "queues", title: "Queues", cluster: c, data: v}, nil
}

type treeQueue struct {
	q     *sluicev1.Queue
	depth int
}

// queueTree orders queues depth first, children by name under their parent; a queue whose
// parent is missing (or that is in a cycle) is a root.
func queueTree(qs []*sluicev1.Queue) []treeQueue {
	byName := map[string]*sluicev1.Queue{}
	children := map[string][]*sluicev1.Queue{}
	for _, q := range qs {
		byName[q.GetName()] = q
	}
	var roots []*sluicev1.Queue
	for _, q := range qs {
		if p := q.GetParent(); p != "" && p != q.GetName() && byName[p] != nil {
			children[p] = append(children[p], q)
		} else {
			roots = append(roots, q)
		}
	}
	out := make([]treeQueue, 0, len(qs))
	seen := map[string]bool{}
	var walk func(q *sluicev1.Queue, depth int)
	walk = func(q *sluicev1.Queue, depth int) {
		if seen[q.GetName()] {
			return
		}
		seen[q.GetName()] = true
		out = append(out, treeQueue{q: q, depth: depth})
		for _, c := range children[q.GetName()] {
			walk(c, depth+1)
		}
	}
	for _, q := range roots {
		walk(q, 0)
	}
	for _, q := range qs { // queues in a parent cycle
		walk(q, 0)
	}
	return out
}

// jobFilter is the jobs page's query.
type jobFilter struct {
	Search    string `json:"search"`
	Queue     string `json:"queue"`
	Namespace string `json:"namespace"`
	Phase     string `json:"phase"`
}

type jobRow struct {
	Namespace    string  `json:"namespace"`
	Name         string  `json:"name"`
	Link         string  `json:"link"`
	Queue        string  `json:"queue"`
	Phase        string  `json:"phase"`
	Priority     int32   `json:"priority"`
	MinAvailable int32   `json:"minAvailable"`
	Tasks        []Count `json:"tasks"`
	Age          string  `json:"age"`
}

type jobsView struct {
	Filter jobFilter `json:"filter"`
	Phases []string  `json:"phases"`
	Jobs   []jobRow  `json:"jobs"`
	// Next continues the list; First goes back to its start (both "" when not needed).
	Next  string `json:"next"`
	First string `json:"first"`
}

// jobsPage lists a page of the jobs that match the filters.
func (u *UI) jobsPage(r *http.Request, id *service.Identity) (*view, error) {
	c := r.PathValue("cluster")
	q := r.URL.Query()
	f := jobFilter{Search: q.Get("q"), Queue: q.Get("queue"), Namespace: q.Get("namespace"), Phase: q.Get("phase")}
	query := service.JobQuery{Cluster: c, Queue: f.Queue, Namespace: f.Namespace, Search: f.Search, After: q.Get("after"), Limit: jobsPerPage}
	if f.Phase != "" {
		p, ok := sluicev1.JobPhase_value["JOB_PHASE_"+strings.ToUpper(f.Phase)]
		if !ok || p == 0 {
			return nil, fmt.Errorf("%w: unknown phase %q", errBadRequest, f.Phase)
		}
		query.Phase = sluicev1.JobPhase(p)
	}
	rows, next, err := u.src.Jobs(r.Context(), id, query)
	if err != nil {
		return nil, err
	}
	v := jobsView{Filter: f}
	for p := sluicev1.JobPhase(1); int(p) < len(sluicev1.JobPhase_name); p++ {
		v.Phases = append(v.Phases, enumWord(p.String(), "JOB_PHASE_"))
	}
	now := u.now()
	for _, row := range rows {
		j := row.Job
		v.Jobs = append(v.Jobs, jobRow{
			Namespace: j.GetNamespace(), Name: j.GetName(), Link: link(nil, "c", c, "jobs", j.GetNamespace(), j.GetName()),
			Queue: j.GetQueue(), Phase: enumWord(j.GetPhase().String(), "JOB_PHASE_"), Priority: j.GetPriority(),
			MinAvailable: j.GetMinAvailable(), Tasks: counts(row.Tasks, sluicev1.TaskStatus_value, "TASK_STATUS_"),
			Age: age(now, j.GetCreatedAt().AsTime()),
		})
	}
	keep := url.Values{}
	for k, val := range map[string]string{"q": f.Search, "queue": f.Queue, "namespace": f.Namespace, "phase": f.Phase} {
		if val != "" {
			keep.Set(k, val)
		}
	}
	if next != "" {
		nq := url.Values{"after": {next}}
		for k, val := range keep {
			nq[k] = val
		}
		v.Next = link(nq, "c", c, "jobs")
	}
	if query.After != "" {
		v.First = link(keep, "c", c, "jobs")
	}
	return &view{template: "jobs", title: "Jobs", cluster: c, data: v}, nil
}

type taskRow struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Role      string `json:"role"`
	Status    string `json:"status"`
	Node      string `json:"node"`
	Resources string `json:"resources"`
	Job       string `json:"job"`
	JobLink   string `json:"jobLink"`
	NodeLink  string `json:"nodeLink"`
}

type reasonRow struct {
	Reason  string  `json:"reason"`
	Nodes   int32   `json:"nodes"`
	Percent float64 `json:"percent"`
}

type explanationView struct {
	// Explained is false when no cycle has looked at the job yet.
	Explained    bool        `json:"explained"`
	Phase        string      `json:"phase"`
	Previous     string      `json:"previous"`
	Ready        int32       `json:"ready"`
	Pending      int32       `json:"pending"`
	MinAvailable int32       `json:"minAvailable"`
	Summary      string      `json:"summary"`
	NodesTotal   int32       `json:"nodesTotal"`
	Reasons      []reasonRow `json:"reasons"`
	Placeable    int32       `json:"placeable"`
	GangMinimum  int32       `json:"gangMinimum"`
	HasGang      bool        `json:"hasGang"`
	QueueReason  string      `json:"queueReason"`
	PlanID       string      `json:"planId"`
	PlanLink     string      `json:"planLink"`
}

type jobView struct {
	Namespace     string          `json:"namespace"`
	Name          string          `json:"name"`
	Queue         string          `json:"queue"`
	Phase         string          `json:"phase"`
	PriorityClass string          `json:"priorityClass"`
	Priority      int32           `json:"priority"`
	MinAvailable  int32           `json:"minAvailable"`
	Age           string          `json:"age"`
	Labels        []string        `json:"labels"`
	Explanation   explanationView `json:"explanation"`
	Tasks         []taskRow       `json:"tasks"`
	// NextTasks continues the task list.
	NextTasks string `json:"nextTasks"`
}

// jobPage shows a job, why it waits, and a page of its tasks.
func (u *UI) jobPage(r *http.Request, id *service.Identity) (*view, error) {
	c, ns, name := r.PathValue("cluster"), r.PathValue("namespace"), r.PathValue("name")
	ctx := r.Context()
	jr, err := u.src.GetJob(ctx, id, &sluicev1.GetJobRequest{Cluster: c, Namespace: ns, Name: name})
	if err != nil {
		return nil, err
	}
	ex, err := u.src.ExplainJob(ctx, id, &sluicev1.ExplainJobRequest{Cluster: c, Namespace: ns, Name: name})
	if err != nil {
		return nil, err
	}
	tr, err := u.src.ListTasks(ctx, id, &sluicev1.ListTasksRequest{Cluster: c, Namespace: ns, Job: name, PageSize: tasksPerPage, PageToken: r.URL.Query().Get("tasks")})
	if err != nil {
		return nil, err
	}
	j := jr.GetJob()
	v := jobView{
		Namespace: j.GetNamespace(), Name: j.GetName(), Queue: j.GetQueue(), Phase: enumWord(j.GetPhase().String(), "JOB_PHASE_"),
		PriorityClass: j.GetPriorityClass(), Priority: j.GetPriority(), MinAvailable: j.GetMinAvailable(),
		Age: age(u.now(), j.GetCreatedAt().AsTime()), Labels: pairs(j.GetLabels()),
		Explanation: explanation(c, ex),
	}
	v.Tasks = taskRows(c, tr.GetTasks())
	if t := tr.GetNextPageToken(); t != "" {
		v.NextTasks = link(url.Values{"tasks": {t}}, "c", c, "jobs", ns, name)
	}
	return &view{template: "job", title: ns + "/" + name, cluster: c, data: v}, nil
}

// explanation converts ExplainJob's answer.
func explanation(cluster string, ex *sluicev1.ExplainJobResponse) explanationView {
	o := ex.GetOutcome()
	e := o.GetExplanation()
	v := explanationView{
		Explained: ex.GetPlanId() != "", Phase: enumWord(o.GetPhase().String(), "JOB_PHASE_"),
		Previous: enumWord(o.GetPreviousPhase().String(), "JOB_PHASE_"),
		Ready:    o.GetReady(), Pending: o.GetPending(), MinAvailable: o.GetMinAvailable(),
		Summary: e.GetSummary(), NodesTotal: e.GetNodesTotal(), QueueReason: e.GetQueueReason(),
		PlanID: ex.GetPlanId(),
	}
	if g := e.GetGang(); g != nil {
		v.HasGang, v.Placeable, v.GangMinimum = true, g.GetPlaceable(), g.GetMinAvailable()
	}
	if v.PlanID != "" {
		v.PlanLink = link(nil, "c", cluster, "plans", v.PlanID)
	}
	for _, rc := range e.GetReasons() {
		pct := 0.0
		if e.GetNodesTotal() > 0 {
			pct = float64(100*rc.GetNodes()) / float64(e.GetNodesTotal())
		}
		v.Reasons = append(v.Reasons, reasonRow{Reason: rc.GetReason(), Nodes: rc.GetNodes(), Percent: pct})
	}
	return v
}

func taskRows(cluster string, ts []*sluicev1.Task) []taskRow {
	out := make([]taskRow, 0, len(ts))
	for _, t := range ts {
		row := taskRow{
			Namespace: t.GetNamespace(), Name: t.GetName(), Role: t.GetRole(),
			Status: enumWord(t.GetStatus().String(), "TASK_STATUS_"), Node: t.GetNode(),
			Resources: strings.Join(pairs(t.GetResources()), " "), Job: t.GetJob(),
			JobLink: link(nil, "c", cluster, "jobs", t.GetNamespace(), t.GetJob()),
		}
		if row.Node != "" {
			row.NodeLink = link(nil, "c", cluster, "nodes", row.Node)
		}
		out = append(out, row)
	}
	return out
}

// pairs writes a map as sorted key=value strings.
func pairs[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%v", k, v))
	}
	slices.Sort(out)
	return out
}

type nodeRow struct {
	Name          string `json:"name"`
	Link          string `json:"link"`
	Unschedulable bool   `json:"unschedulable"`
	Bars          []Bar  `json:"bars"`
	// Heat is the class of the node's busiest resource.
	Heat    string   `json:"heat"`
	Tasks   int      `json:"tasks"`
	Devices []string `json:"devices"`
	Labels  []string `json:"labels"`
	Taints  []string `json:"taints"`
}

type nodesView struct {
	Nodes []nodeRow `json:"nodes"`
	Next  string    `json:"next"`
	First string    `json:"first"`
}

// nodesPage lists a page of nodes with their utilization.
func (u *UI) nodesPage(r *http.Request, id *service.Identity) (*view, error) {
	c := r.PathValue("cluster")
	after := r.URL.Query().Get("after")
	rows, next, err := u.src.Nodes(r.Context(), id, c, after, nodesPerPage)
	if err != nil {
		return nil, err
	}
	v := nodesView{}
	for _, row := range rows {
		v.Nodes = append(v.Nodes, nodeRowOf(c, row))
	}
	if next != "" {
		v.Next = link(url.Values{"after": {next}}, "c", c, "nodes")
	}
	if after != "" {
		v.First = link(nil, "c", c, "nodes")
	}
	return &view{template: "nodes", title: "Nodes", cluster: c, data: v}, nil
}

func nodeRowOf(cluster string, row service.NodeRow) nodeRow {
	n := row.Node
	out := nodeRow{
		Name: n.GetName(), Link: link(nil, "c", cluster, "nodes", n.GetName()), Unschedulable: n.GetUnschedulable(),
		Bars: bars(row.Used, n.GetAllocatable(), "pods"), Tasks: row.Tasks, Labels: pairs(n.GetLabels()), Heat: "h0",
	}
	top := -1.0
	for _, b := range out.Bars {
		if b.Percent > top {
			top, out.Heat = b.Percent, b.Heat
		}
	}
	for _, t := range n.GetTaints() {
		out.Taints = append(out.Taints, fmt.Sprintf("%s=%s:%s", t.GetKey(), t.GetValue(), enumWord(t.GetEffect().String(), "TAINT_EFFECT_")))
	}
	for _, d := range n.GetDevices() {
		s := d.GetId() + " " + d.GetType()
		if d.GetModel() != "" {
			s += " " + d.GetModel()
		}
		out.Devices = append(out.Devices, s)
	}
	return out
}

type nodeView struct {
	Node      nodeRow   `json:"node"`
	Usage     []string  `json:"usage"`
	TaskList  []taskRow `json:"taskList"`
	NextTasks string    `json:"nextTasks"`
}

// nodePage shows a node and a page of the tasks on it.
func (u *UI) nodePage(r *http.Request, id *service.Identity) (*view, error) {
	c, name := r.PathValue("cluster"), r.PathValue("name")
	row, err := u.src.Node(r.Context(), id, c, name)
	if err != nil {
		return nil, err
	}
	tr, err := u.src.ListTasks(r.Context(), id, &sluicev1.ListTasksRequest{Cluster: c, Node: name, PageSize: tasksPerPage, PageToken: r.URL.Query().Get("tasks")})
	if err != nil {
		return nil, err
	}
	v := nodeView{Node: nodeRowOf(c, *row), Usage: pairs(row.Node.GetUsage()), TaskList: taskRows(c, tr.GetTasks())}
	if t := tr.GetNextPageToken(); t != "" {
		v.NextTasks = link(url.Values{"tasks": {t}}, "c", c, "nodes", name)
	}
	return &view{template: "node", title: name, cluster: c, data: v}, nil
}

type planRow struct {
	ID                string `json:"id"`
	Link              string `json:"link"`
	State             string `json:"state"`
	ScheduledAt       string `json:"scheduledAt"`
	Duration          string `json:"duration"`
	BaseRevision      uint64 `json:"baseRevision"`
	CommittedRevision uint64 `json:"committedRevision"`
	Binds             int32  `json:"binds"`
	Pipelines         int32  `json:"pipelines"`
	Evicts            int32  `json:"evicts"`
	Jobs              int32  `json:"jobs"`
	Applied           int32  `json:"applied"`
	Rejected          int32  `json:"rejected"`
	DecisionsDropped  bool   `json:"decisionsDropped"`
}

type plansView struct {
	Plans []planRow `json:"plans"`
	Next  string    `json:"next"`
}

func planRowOf(cluster string, p *sluicev1.Plan) planRow {
	c := p.GetCounts()
	row := planRow{
		ID: p.GetId(), Link: link(nil, "c", cluster, "plans", p.GetId()), State: enumWord(p.GetState().String(), "PLAN_STATE_"),
		BaseRevision: p.GetBaseRevision(), CommittedRevision: p.GetCommittedRevision(),
		Binds: c.GetBinds(), Pipelines: c.GetPipelines(), Evicts: c.GetEvicts(), Jobs: c.GetJobs(),
		Applied: c.GetApplied(), Rejected: c.GetRejected(), DecisionsDropped: p.GetDecisionsDropped(),
		Duration: p.GetStats().GetTotal().AsDuration().String(),
	}
	if t := p.GetScheduledAt(); t != nil {
		row.ScheduledAt = t.AsTime().UTC().Format("2006-01-02 15:04:05Z")
	}
	return row
}

// plansPage lists the cluster's recent plans, newest first.
func (u *UI) plansPage(r *http.Request, id *service.Identity) (*view, error) {
	c := r.PathValue("cluster")
	ps, err := u.src.Plans(r.Context(), id, c, r.URL.Query().Get("before"), plansPerPage+1)
	if err != nil {
		return nil, err
	}
	v := plansView{}
	for i, p := range ps {
		if i == plansPerPage {
			v.Next = link(url.Values{"before": {ps[i-1].GetId()}}, "c", c, "plans")
			break
		}
		v.Plans = append(v.Plans, planRowOf(c, p))
	}
	return &view{template: "plans", title: "Plans", cluster: c, data: v}, nil
}

type decisionRow struct {
	Kind     string `json:"kind"`
	Task     string `json:"task"`
	TaskLink string `json:"taskLink"`
	Job      string `json:"job"`
	Node     string `json:"node"`
	NodeLink string `json:"nodeLink"`
	Devices  string `json:"devices"`
	// Preemptor, Rule and Reason are an eviction's: the task it makes room for, the action
	// that chose it, and why.
	Preemptor    string `json:"preemptor"`
	Rule         string `json:"rule"`
	Reason       string `json:"reason"`
	Outcome      string `json:"outcome"`
	Rejected     string `json:"rejected"`
	Hypothetical bool   `json:"hypothetical"`
}

type outcomeRow struct {
	Job      string `json:"job"`
	Link     string `json:"link"`
	Phase    string `json:"phase"`
	Previous string `json:"previous"`
	Ready    int32  `json:"ready"`
	Pending  int32  `json:"pending"`
	MinAvail int32  `json:"minAvail"`
	Summary  string `json:"summary"`
}

type planView struct {
	Plan       planRow       `json:"plan"`
	Decisions  []decisionRow `json:"decisions"`
	Rejections []decisionRow `json:"rejections"`
	Outcomes   []outcomeRow  `json:"outcomes"`
	Next       string        `json:"next"`
}

// planPage shows a page of a plan's decisions and job outcomes, and its rejections.
func (u *UI) planPage(r *http.Request, id *service.Identity) (*view, error) {
	c, pid := r.PathValue("cluster"), r.PathValue("id")
	resp, err := u.src.GetPlan(r.Context(), id, &sluicev1.GetPlanRequest{Cluster: c, PlanId: pid, PageSize: decisionsPerPage, PageToken: r.URL.Query().Get("page")})
	if err != nil {
		return nil, err
	}
	p := resp.GetPlan()
	v := planView{Plan: planRowOf(c, p)}
	for _, d := range p.GetDecisions() {
		row := decisionRowOf(c, d)
		v.Decisions = append(v.Decisions, row)
		if row.Rejected != "" {
			v.Rejections = append(v.Rejections, row)
		}
	}
	for _, o := range p.GetJobs() {
		v.Outcomes = append(v.Outcomes, outcomeRow{
			Job: o.GetJob().GetNamespace() + "/" + o.GetJob().GetName(), Link: link(nil, "c", c, "jobs", o.GetJob().GetNamespace(), o.GetJob().GetName()),
			Phase: enumWord(o.GetPhase().String(), "JOB_PHASE_"), Previous: enumWord(o.GetPreviousPhase().String(), "JOB_PHASE_"),
			Ready: o.GetReady(), Pending: o.GetPending(), MinAvail: o.GetMinAvailable(), Summary: o.GetExplanation().GetSummary(),
		})
	}
	if t := resp.GetNextPageToken(); t != "" {
		v.Next = link(url.Values{"page": {t}}, "c", c, "plans", pid)
	}
	return &view{template: "plan", title: pid, cluster: c, data: v}, nil
}

func decisionRowOf(cluster string, d *sluicev1.Decision) decisionRow {
	var row decisionRow
	ref := func(t *sluicev1.TaskRef) string { return t.GetNamespace() + "/" + t.GetName() }
	switch k := d.GetKind().(type) {
	case *sluicev1.Decision_Bind:
		row = decisionRow{Kind: "bind", Task: ref(k.Bind.GetTask()), Job: k.Bind.GetJob().GetName(), Node: k.Bind.GetNode(),
			Devices: strings.Join(k.Bind.GetDeviceIds(), " ")}
	case *sluicev1.Decision_Pipeline:
		row = decisionRow{Kind: "pipeline", Task: ref(k.Pipeline.GetTask()), Job: k.Pipeline.GetJob().GetName(), Node: k.Pipeline.GetNode()}
	case *sluicev1.Decision_Evict:
		e := k.Evict
		row = decisionRow{Kind: "evict", Task: ref(e.GetTask()), Job: e.GetJob().GetName(), Node: e.GetNode(),
			Rule: e.GetAction(), Reason: e.GetReason()}
		if e.GetForTask() != nil {
			row.Preemptor = ref(e.GetForTask())
		}
	}
	if row.Node != "" {
		row.NodeLink = link(nil, "c", cluster, "nodes", row.Node)
	}
	if ns, _, ok := strings.Cut(row.Task, "/"); ok && row.Job != "" {
		row.TaskLink = link(nil, "c", cluster, "jobs", ns, row.Job)
	}
	row.Outcome = enumWord(d.GetOutcome().String(), "DECISION_OUTCOME_")
	row.Rejected = d.GetRejectedReason()
	row.Hypothetical = d.GetHypothetical()
	return row
}

type configView struct {
	Config string `json:"config"`
	Etag   string `json:"etag"`
}

// configPage shows the cluster's scheduler configuration (admin tokens only, as in the API).
func (u *UI) configPage(r *http.Request, id *service.Identity) (*view, error) {
	c := r.PathValue("cluster")
	resp, err := u.src.GetSchedulerConfig(r.Context(), id, &sluicev1.GetSchedulerConfigRequest{Cluster: c})
	if err != nil {
		return nil, err
	}
	return &view{template: "config", title: "Configuration", cluster: c, data: configView{Config: resp.GetConfig(), Etag: resp.GetEtag()}}, nil
}
