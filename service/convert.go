package service

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// This file converts between the API's messages and the engine's model. On the way in,
// quantities are parsed once (bad ones are recorded as field violations) and the defaults the
// proto comments document are applied; on the way out, amounts become quantity strings again.

// Defaults the API documents.
const (
	defaultNamespace = "default"
	defaultQueue     = "default"
	hostnameLabel    = "kubernetes.io/hostname"
	// resourceEphemeralStorage is a scalar resource counted in bytes; it is shown like memory.
	resourceEphemeralStorage = "ephemeral-storage"
)

// orDefault returns s, or dflt when s is empty.
func orDefault(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}

// The API's closed sets and the engine's spelling of each value (Kubernetes' and Volcano's).
// UNSPECIFIED is in none of them: the converters give it the default the proto documents, and
// validation refuses it where a value is required (checkClosed). A value outside a map is
// refused by validation too.
var (
	taintEffectsIn = map[sluicev1.TaintEffect]string{
		sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE:        "NoSchedule",
		sluicev1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE: "PreferNoSchedule",
		sluicev1.TaintEffect_TAINT_EFFECT_NO_EXECUTE:         "NoExecute",
	}
	tolerationOpsIn = map[sluicev1.TolerationOperator]string{
		sluicev1.TolerationOperator_TOLERATION_OPERATOR_EQUAL:  "Equal",
		sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS: "Exists",
	}
	whenUnsatisfiableIn = map[sluicev1.WhenUnsatisfiable]string{
		sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE: "DoNotSchedule",
		sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY: "ScheduleAnyway",
	}
	topologyModesIn = map[sluicev1.NetworkTopologyMode]string{
		sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_HARD: "hard",
		sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_SOFT: "soft",
	}

	taintEffectsOut      = invert(taintEffectsIn)
	tolerationOpsOut     = invert(tolerationOpsIn)
	whenUnsatisfiableOut = invert(whenUnsatisfiableIn)
	topologyModesOut     = invert(topologyModesIn)
)

// invert maps each value of m back to its key; m's values must be distinct.
func invert[K, V comparable](m map[K]V) map[V]K {
	out := make(map[V]K, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}

// closedIn returns the engine's spelling of v, or dflt for a value m does not hold
// (UNSPECIFIED; validation has refused the others).
func closedIn[E comparable](m map[E]string, v E, dflt string) string {
	if s, ok := m[v]; ok {
		return s
	}
	return dflt
}

// taskRef names an engine task UID ("namespace/name") the way the API does; "" is nil.
func taskRef(uid string) *sluicev1.TaskRef {
	if uid == "" {
		return nil
	}
	ns, name := splitUID(uid)
	return &sluicev1.TaskRef{Namespace: ns, Name: name}
}

// jobRef names an engine job UID ("namespace/name") the way the API does; "" is nil.
func jobRef(uid string) *sluicev1.JobRef {
	if uid == "" {
		return nil
	}
	ns, name := splitUID(uid)
	return &sluicev1.JobRef{Namespace: ns, Name: name}
}

// splitUID splits an engine UID at its first '/': namespaces never hold one (checkNamespace),
// names may.
func splitUID(uid string) (namespace, name string) {
	if ns, n, ok := strings.Cut(uid, "/"); ok {
		return ns, n
	}
	return defaultNamespace, uid
}

// cloneMap copies a map; an empty one becomes nil.
func cloneMap[V any](m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// resourceFromProto parses a resource list: cpu to milli-CPU, memory to bytes, pods to a task
// count, anything else to milli-units.
func resourceFromProto(fe *fieldErrors, p string, m map[string]string) api.Resource {
	var r api.Resource
	var buf [8]string
	names := buf[:0]
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v, ok := resourceAmount(fe, p, name, m[name])
		if !ok {
			continue
		}
		switch name {
		case api.ResourceCPU:
			r.MilliCPU = float64(v)
		case api.ResourceMemory:
			r.Memory = float64(v)
		case api.ResourcePods:
			r.MaxTaskNum = int(v)
		default:
			r.SetScalar(name, float64(v))
		}
	}
	return r
}

// resourceAmount parses the entry name: s of the resource list at p, recording what is wrong
// with the name and the quantity. The entry's path is built only when it is recorded.
func resourceAmount(fe *fieldErrors, p, name, s string) (int64, bool) {
	unit := unitOf(name)
	if resourceNameProblem(fe, name) == "" {
		if v, problem := parseQuantity(s, unit); problem == "" {
			return v, true
		}
	}
	field := key(p, name)
	checkResourceName(fe, field, name)
	return quantity(fe, field, s, unit)
}

// bytesFromProto parses an optional byte quantity (device memory).
func bytesFromProto(fe *fieldErrors, field, s string) float64 {
	if s == "" {
		return 0
	}
	v, _ := quantity(fe, field, s, wholeUnits)
	return float64(v)
}

func timeFromProto(ts *timestamppb.Timestamp) time.Time {
	if ts == nil || ts.CheckValid() != nil {
		return time.Time{}
	}
	return ts.AsTime()
}

func boolOr(b *bool, dflt bool) bool {
	if b == nil {
		return dflt
	}
	return *b
}

func nodeFromProto(fe *fieldErrors, p string, n *sluicev1.Node) *api.Node {
	seen := len(fe.list)
	out := &api.Node{
		Name:          n.GetName(),
		Allocatable:   resourceFromProto(fe, sub(p, "allocatable"), n.GetAllocatable()),
		Labels:        cloneMap(n.GetLabels()),
		Unschedulable: n.GetUnschedulable(),
		Usage:         cloneMap(n.GetUsage()),
		NumaTopology:  numaFromProto(fe, sub(p, "numa_topology"), n.GetNumaTopology()),
	}
	if len(n.GetAllocatable()) > 0 && len(fe.list) == seen {
		checkOffers(fe, sub(p, "allocatable"), &out.Allocatable)
	}
	if _, ok := out.Labels[hostnameLabel]; !ok {
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[hostnameLabel] = out.Name
	}
	for _, t := range n.GetTaints() {
		out.Taints = append(out.Taints, api.Taint{Key: t.GetKey(), Value: t.GetValue(), Effect: taintEffectsIn[t.GetEffect()]})
	}
	for i, d := range n.GetDevices() {
		dev := api.Device{
			ID:         d.GetId(),
			Type:       d.GetType(),
			Model:      d.GetModel(),
			Memory:     bytesFromProto(fe, sub(idx(sub(p, "devices"), i), "memory"), d.GetMemory()),
			Cores:      d.GetCores(),
			Attributes: cloneMap(d.GetAttributes()),
		}
		if dev.Cores == 0 {
			dev.Cores = 100
		}
		out.Devices = append(out.Devices, dev)
	}
	return out
}

func queueStateFromProto(s sluicev1.QueueState) api.QueueState {
	switch s {
	case sluicev1.QueueState_QUEUE_STATE_CLOSED:
		return api.QueueClosed
	case sluicev1.QueueState_QUEUE_STATE_CLOSING:
		return api.QueueClosing
	}
	return api.QueueOpen
}

func nodeGroupsFromProto(a *sluicev1.NodeGroupAffinity) api.NodeGroupAffinity {
	return api.NodeGroupAffinity{
		Required:  slices.Clone(a.GetRequired()),
		Preferred: slices.Clone(a.GetPreferred()),
	}
}

func queueFromProto(fe *fieldErrors, p string, q *sluicev1.Queue) *api.Queue {
	out := &api.Queue{
		Name:                  q.GetName(),
		Parent:                q.GetParent(),
		Weight:                q.GetWeight(),
		Capability:            resourceFromProto(fe, sub(p, "capability"), q.GetCapability()),
		Deserved:              resourceFromProto(fe, sub(p, "deserved"), q.GetDeserved()),
		Guarantee:             resourceFromProto(fe, sub(p, "guarantee"), q.GetGuarantee()),
		Priority:              q.GetPriority(),
		State:                 queueStateFromProto(q.GetState()),
		Reclaimable:           boolOr(q.Reclaimable, true),
		NodeGroupAffinity:     nodeGroupsFromProto(q.GetNodeGroupAffinity()),
		NodeGroupAntiAffinity: nodeGroupsFromProto(q.GetNodeGroupAntiAffinity()),
		Labels:                cloneMap(q.GetLabels()),
		Annotations:           cloneMap(q.GetAnnotations()),
	}
	if out.Weight == 0 {
		out.Weight = 1
	}
	return out
}

// jobPhasesIn maps the API's phases to the engine's; an unspecified phase is left unset (""),
// which the store fills in (the stored phase, or Inqueue for a new job).
var jobPhasesIn = map[sluicev1.JobPhase]api.JobPhase{
	sluicev1.JobPhase_JOB_PHASE_PENDING:   api.JobPending,
	sluicev1.JobPhase_JOB_PHASE_INQUEUE:   api.JobInqueue,
	sluicev1.JobPhase_JOB_PHASE_RUNNING:   api.JobRunning,
	sluicev1.JobPhase_JOB_PHASE_COMPLETED: api.JobCompleted,
	sluicev1.JobPhase_JOB_PHASE_UNKNOWN:   api.JobUnknown,
}

// jobFromProto converts a job. The fields the server owns are left unset when the message
// leaves them unset (phase, created_at), for the store to keep or default (engine/state's
// merge.go).
func jobFromProto(fe *fieldErrors, p string, j *sluicev1.Job) *api.Job {
	out := &api.Job{
		Name:               j.GetName(),
		Namespace:          orDefault(j.GetNamespace(), defaultNamespace),
		Queue:              orDefault(j.GetQueue(), defaultQueue),
		PriorityClass:      j.GetPriorityClass(),
		Priority:           j.GetPriority(),
		HasPriority:        j.Priority != nil,
		MinAvailable:       j.GetMinAvailable(),
		MinAvailableByRole: cloneMap(j.GetMinAvailableByRole()),
		MinResources:       resourceFromProto(fe, sub(p, "min_resources"), j.GetMinResources()),
		Phase:              jobPhasesIn[j.GetPhase()],
		CreatedAt:          timeFromProto(j.GetCreatedAt()),
		Labels:             cloneMap(j.GetLabels()),
		Annotations:        cloneMap(j.GetAnnotations()),
	}
	if j.MinAvailable == nil {
		out.MinAvailable = 1
	}
	if nt := j.GetNetworkTopology(); nt != nil {
		out.NetworkTopology = &api.NetworkTopology{Mode: topologyModesIn[nt.GetMode()], HighestTierAllowed: nt.GetHighestTierAllowed()}
	}
	return out
}

// taskStatusesIn maps the API's statuses to the engine's; an unspecified status is left unset
// (0), which the store fills in (the stored status, or Pending for a new task).
var taskStatusesIn = map[sluicev1.TaskStatus]api.TaskStatus{
	sluicev1.TaskStatus_TASK_STATUS_PENDING:   api.Pending,
	sluicev1.TaskStatus_TASK_STATUS_ALLOCATED: api.Allocated,
	sluicev1.TaskStatus_TASK_STATUS_PIPELINED: api.Pipelined,
	sluicev1.TaskStatus_TASK_STATUS_BINDING:   api.Binding,
	sluicev1.TaskStatus_TASK_STATUS_BOUND:     api.Bound,
	sluicev1.TaskStatus_TASK_STATUS_RUNNING:   api.Running,
	sluicev1.TaskStatus_TASK_STATUS_RELEASING: api.Releasing,
	sluicev1.TaskStatus_TASK_STATUS_SUCCEEDED: api.Succeeded,
	sluicev1.TaskStatus_TASK_STATUS_FAILED:    api.Failed,
	sluicev1.TaskStatus_TASK_STATUS_UNKNOWN:   api.Unknown,
}

func selectorFromProto(reqs []*sluicev1.NodeSelectorRequirement) api.NodeSelectorTerm {
	var t api.NodeSelectorTerm
	for _, r := range reqs {
		t.MatchExpressions = append(t.MatchExpressions, api.SelectorRequirement{
			Key: r.GetKey(), Operator: r.GetOperator(), Values: slices.Clone(r.GetValues()),
		})
	}
	return t
}

func taskAffinityFromProto(terms []*sluicev1.TaskAffinityTerm) []api.TaskAffinityTerm {
	var out []api.TaskAffinityTerm
	for _, t := range terms {
		w := t.GetWeight()
		if w == 0 {
			w = 1
		}
		out = append(out, api.TaskAffinityTerm{
			Selector: cloneMap(t.GetSelector()), TopologyKey: t.GetTopologyKey(),
			Required: t.GetRequired(), Weight: w,
		})
	}
	return out
}

func affinityFromProto(a *sluicev1.Affinity) *api.Affinity {
	if a == nil {
		return nil
	}
	out := &api.Affinity{
		TaskAffinity:     taskAffinityFromProto(a.GetTaskAffinity()),
		TaskAntiAffinity: taskAffinityFromProto(a.GetTaskAntiAffinity()),
	}
	for _, t := range a.GetNodeRequired() {
		out.NodeRequired = append(out.NodeRequired, selectorFromProto(t.GetMatchExpressions()))
	}
	for _, t := range a.GetNodePreferred() {
		out.NodePreferred = append(out.NodePreferred, api.PreferredTerm{
			Weight: t.GetWeight(), Term: selectorFromProto(t.GetMatchExpressions()),
		})
	}
	return out
}

// taskFromProto converts a task. The fields the server owns are left unset when the message
// leaves them unset (status, node, device_ids, started_at), for the store to keep or default
// (engine/state's merge.go).
func taskFromProto(fe *fieldErrors, p string, t *sluicev1.Task) *api.Task {
	seen := len(fe.list)
	out := &api.Task{
		Name:          t.GetName(),
		Namespace:     orDefault(t.GetNamespace(), defaultNamespace),
		Job:           t.GetJob(),
		Role:          orDefault(t.GetRole(), t.GetName()),
		Resources:     resourceFromProto(fe, sub(p, "resources"), t.GetResources()),
		Status:        taskStatusesIn[t.GetStatus()],
		Node:          t.GetNode(),
		PriorityClass: t.GetPriorityClass(),
		Priority:      t.GetPriority(),
		HasPriority:   t.Priority != nil,
		StartedAt:     timeFromProto(t.GetStartedAt()),
		NodeSelector:  cloneMap(t.GetNodeSelector()),
		Affinity:      affinityFromProto(t.GetAffinity()),
		Ports:         slices.Clone(t.GetPorts()),
		Labels:        cloneMap(t.GetLabels()),
		Annotations:   cloneMap(t.GetAnnotations()),
		Preemptable:   boolOr(t.Preemptable, true),
		DeviceIDs:     slices.Clone(t.GetDeviceIds()),
		Guaranteed:    t.GetGuaranteed(),
	}
	if len(fe.list) == seen {
		checkGuaranteed(fe, p, out)
	}
	for _, tol := range t.GetTolerations() {
		out.Tolerations = append(out.Tolerations, api.Toleration{
			Key: tol.GetKey(), Operator: closedIn(tolerationOpsIn, tol.GetOperator(), "Equal"),
			Value: tol.GetValue(), Effect: taintEffectsIn[tol.GetEffect()], // unspecified: "", every effect
		})
	}
	for _, s := range t.GetTopologySpread() {
		skew := s.GetMaxSkew()
		if skew == 0 {
			skew = 1
		}
		out.TopologySpread = append(out.TopologySpread, api.TopologySpread{
			MaxSkew: skew, TopologyKey: s.GetTopologyKey(),
			WhenUnsatisfiable: closedIn(whenUnsatisfiableIn, s.GetWhenUnsatisfiable(), "DoNotSchedule"),
			Selector:          cloneMap(s.GetSelector()),
		})
	}
	for i, d := range t.GetDevices() {
		n := d.GetCount()
		if n == 0 {
			n = 1
		}
		out.Devices = append(out.Devices, api.DeviceRequest{
			Type: d.GetType(), Count: n,
			Memory: bytesFromProto(fe, sub(idx(sub(p, "devices"), i), "memory"), d.GetMemory()),
			Cores:  d.GetCores(), Model: d.GetModel(),
		})
	}
	return out
}

func priorityClassFromProto(pc *sluicev1.PriorityClass) *api.PriorityClass {
	return &api.PriorityClass{Name: pc.GetName(), Value: pc.GetValue()}
}

func quotaFromProto(fe *fieldErrors, p string, q *sluicev1.NamespaceQuota) *api.NamespaceQuota {
	return &api.NamespaceQuota{Namespace: q.GetNamespace(), Hard: resourceFromProto(fe, sub(p, "hard"), q.GetHard())}
}

func budgetFromProto(b *sluicev1.DisruptionBudget) *api.DisruptionBudget {
	return &api.DisruptionBudget{
		Name:           b.GetName(),
		Namespace:      orDefault(b.GetNamespace(), defaultNamespace),
		Selector:       cloneMap(b.GetSelector()),
		MinAvailable:   b.GetMinAvailable(),
		MaxUnavailable: b.GetMaxUnavailable(),
	}
}

func hyperNodeFromProto(h *sluicev1.HyperNode) *api.HyperNode {
	return &api.HyperNode{Name: h.GetName(), Tier: h.GetTier(), Members: slices.Clone(h.GetMembers())}
}

var kindsIn = map[sluicev1.ObjectKind]state.Kind{
	sluicev1.ObjectKind_OBJECT_KIND_NODE:              state.KindNode,
	sluicev1.ObjectKind_OBJECT_KIND_QUEUE:             state.KindQueue,
	sluicev1.ObjectKind_OBJECT_KIND_JOB:               state.KindJob,
	sluicev1.ObjectKind_OBJECT_KIND_TASK:              state.KindTask,
	sluicev1.ObjectKind_OBJECT_KIND_PRIORITY_CLASS:    state.KindPriorityClass,
	sluicev1.ObjectKind_OBJECT_KIND_NAMESPACE_QUOTA:   state.KindQuota,
	sluicev1.ObjectKind_OBJECT_KIND_DISRUPTION_BUDGET: state.KindBudget,
	sluicev1.ObjectKind_OBJECT_KIND_HYPER_NODE:        state.KindHyperNode,
}

// refFromProto converts a delete's object reference; namespaced kinds default their
// namespace, and a quota is named by its namespace.
func refFromProto(r *sluicev1.ObjectRef) state.Ref {
	k := kindsIn[r.GetKind()]
	switch k {
	case state.KindJob, state.KindTask, state.KindBudget:
		return state.Ref{Kind: k, Namespace: orDefault(r.GetNamespace(), defaultNamespace), Name: r.GetName()}
	case state.KindQuota:
		return state.Ref{Kind: k, Namespace: r.GetName()}
	}
	return state.Ref{Kind: k, Name: r.GetName()}
}

// Output.

// toInt64 rounds an amount to an integer, saturating at the int64 range (derived figures may
// be huge or, in a plugin's arithmetic, not a number).
func toInt64(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64:
		return math.MaxInt64
	case v <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(v))
}

// formatMilli formats an amount in thousandths as a quantity: "500m", "2".
func formatMilli(v float64) string {
	return resource.NewMilliQuantity(toInt64(v), resource.DecimalSI).String()
}

// formatBytes formats bytes as a quantity, binary ("8Gi") when a multiple of 1024.
func formatBytes(v float64) string {
	b := toInt64(v)
	format := resource.DecimalSI
	if b != 0 && b%1024 == 0 {
		format = resource.BinarySI
	}
	return resource.NewQuantity(b, format).String()
}

// resourceToProto formats a resource list; cpu, memory and pods appear when not zero, scalars
// always.
func resourceToProto(r *api.Resource) map[string]string {
	if r == nil {
		return nil
	}
	out := map[string]string{}
	if r.MilliCPU != 0 {
		out[api.ResourceCPU] = formatMilli(r.MilliCPU)
	}
	if r.Memory != 0 {
		out[api.ResourceMemory] = formatBytes(r.Memory)
	}
	if r.MaxTaskNum != 0 {
		out[api.ResourcePods] = strconv.Itoa(r.MaxTaskNum)
	}
	for name, v := range r.Scalars {
		if name == resourceEphemeralStorage && math.Mod(v, 1000) == 0 {
			out[name] = formatBytes(v / 1000)
		} else {
			out[name] = formatMilli(v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ptr returns a pointer to a copy of v, so that no message points into a stored object.
func ptr[T any](v T) *T { return &v }

func timeToProto(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func optionalBytes(v float64) string {
	if v == 0 {
		return ""
	}
	return formatBytes(v)
}

// The *ToProto functions of the objects take the object's modify revision (state's
// View.ModRevision), which the API calls mod_revision.

func nodeToProto(n *api.Node, modRev uint64) *sluicev1.Node {
	out := &sluicev1.Node{
		ModRevision:   modRev,
		Name:          n.Name,
		Allocatable:   resourceToProto(&n.Allocatable),
		Labels:        cloneMap(n.Labels),
		Unschedulable: n.Unschedulable,
		Usage:         cloneMap(n.Usage),
		NumaTopology:  numaToProto(n.NumaTopology),
	}
	for _, t := range n.Taints {
		out.Taints = append(out.Taints, &sluicev1.Taint{Key: t.Key, Value: t.Value, Effect: taintEffectsOut[t.Effect]})
	}
	for _, d := range n.Devices {
		out.Devices = append(out.Devices, &sluicev1.Device{
			Id: d.ID, Type: d.Type, Model: d.Model, Memory: optionalBytes(d.Memory),
			Cores: d.Cores, Attributes: cloneMap(d.Attributes),
		})
	}
	return out
}

var queueStatesOut = map[api.QueueState]sluicev1.QueueState{
	api.QueueOpen:    sluicev1.QueueState_QUEUE_STATE_OPEN,
	api.QueueClosed:  sluicev1.QueueState_QUEUE_STATE_CLOSED,
	api.QueueClosing: sluicev1.QueueState_QUEUE_STATE_CLOSING,
}

func nodeGroupsToProto(a api.NodeGroupAffinity) *sluicev1.NodeGroupAffinity {
	if len(a.Required) == 0 && len(a.Preferred) == 0 {
		return nil
	}
	return &sluicev1.NodeGroupAffinity{Required: slices.Clone(a.Required), Preferred: slices.Clone(a.Preferred)}
}

// queueToProto converts a queue; status is filled in by the caller.
func queueToProto(q *api.Queue, modRev uint64) *sluicev1.Queue {
	return &sluicev1.Queue{
		ModRevision:           modRev,
		Name:                  q.Name,
		Parent:                q.Parent,
		Weight:                q.Weight,
		Capability:            resourceToProto(&q.Capability),
		Deserved:              resourceToProto(&q.Deserved),
		Guarantee:             resourceToProto(&q.Guarantee),
		Priority:              q.Priority,
		State:                 queueStatesOut[q.State],
		Reclaimable:           ptr(q.Reclaimable),
		NodeGroupAffinity:     nodeGroupsToProto(q.NodeGroupAffinity),
		NodeGroupAntiAffinity: nodeGroupsToProto(q.NodeGroupAntiAffinity),
		Labels:                cloneMap(q.Labels),
		Annotations:           cloneMap(q.Annotations),
	}
}

var jobPhasesOut = map[api.JobPhase]sluicev1.JobPhase{
	api.JobPending:   sluicev1.JobPhase_JOB_PHASE_PENDING,
	api.JobInqueue:   sluicev1.JobPhase_JOB_PHASE_INQUEUE,
	api.JobRunning:   sluicev1.JobPhase_JOB_PHASE_RUNNING,
	api.JobCompleted: sluicev1.JobPhase_JOB_PHASE_COMPLETED,
	api.JobUnknown:   sluicev1.JobPhase_JOB_PHASE_UNKNOWN,
}

func jobPhaseToProto(p api.JobPhase) sluicev1.JobPhase { return jobPhasesOut[p] }

func jobToProto(j *api.Job, modRev uint64) *sluicev1.Job {
	out := &sluicev1.Job{
		ModRevision:        modRev,
		Name:               j.Name,
		Namespace:          j.Namespace,
		Queue:              j.Queue,
		PriorityClass:      j.PriorityClass,
		MinAvailable:       &j.MinAvailable,
		MinAvailableByRole: cloneMap(j.MinAvailableByRole),
		MinResources:       resourceToProto(&j.MinResources),
		Phase:              jobPhaseToProto(j.Phase),
		CreatedAt:          timeToProto(j.CreatedAt),
		Labels:             cloneMap(j.Labels),
		Annotations:        cloneMap(j.Annotations),
	}
	if j.HasPriority {
		out.Priority = ptr(j.Priority)
	}
	if nt := j.NetworkTopology; nt != nil {
		out.NetworkTopology = &sluicev1.NetworkTopology{Mode: topologyModesOut[nt.Mode], HighestTierAllowed: nt.HighestTierAllowed}
	}
	return out
}

var taskStatusesOut = map[api.TaskStatus]sluicev1.TaskStatus{
	api.Pending:   sluicev1.TaskStatus_TASK_STATUS_PENDING,
	api.Allocated: sluicev1.TaskStatus_TASK_STATUS_ALLOCATED,
	api.Pipelined: sluicev1.TaskStatus_TASK_STATUS_PIPELINED,
	api.Binding:   sluicev1.TaskStatus_TASK_STATUS_BINDING,
	api.Bound:     sluicev1.TaskStatus_TASK_STATUS_BOUND,
	api.Running:   sluicev1.TaskStatus_TASK_STATUS_RUNNING,
	api.Releasing: sluicev1.TaskStatus_TASK_STATUS_RELEASING,
	api.Succeeded: sluicev1.TaskStatus_TASK_STATUS_SUCCEEDED,
	api.Failed:    sluicev1.TaskStatus_TASK_STATUS_FAILED,
	api.Unknown:   sluicev1.TaskStatus_TASK_STATUS_UNKNOWN,
}

func selectorToProto(t api.NodeSelectorTerm) []*sluicev1.NodeSelectorRequirement {
	var out []*sluicev1.NodeSelectorRequirement
	for _, r := range t.MatchExpressions {
		out = append(out, &sluicev1.NodeSelectorRequirement{Key: r.Key, Operator: r.Operator, Values: slices.Clone(r.Values)})
	}
	return out
}

func taskAffinityToProto(terms []api.TaskAffinityTerm) []*sluicev1.TaskAffinityTerm {
	var out []*sluicev1.TaskAffinityTerm
	for _, t := range terms {
		out = append(out, &sluicev1.TaskAffinityTerm{
			Selector: cloneMap(t.Selector), TopologyKey: t.TopologyKey, Required: t.Required, Weight: t.Weight,
		})
	}
	return out
}

func affinityToProto(a *api.Affinity) *sluicev1.Affinity {
	if a == nil {
		return nil
	}
	out := &sluicev1.Affinity{
		TaskAffinity:     taskAffinityToProto(a.TaskAffinity),
		TaskAntiAffinity: taskAffinityToProto(a.TaskAntiAffinity),
	}
	for _, t := range a.NodeRequired {
		out.NodeRequired = append(out.NodeRequired, &sluicev1.NodeSelectorTerm{MatchExpressions: selectorToProto(t)})
	}
	for _, t := range a.NodePreferred {
		out.NodePreferred = append(out.NodePreferred, &sluicev1.PreferredSchedulingTerm{
			Weight: t.Weight, MatchExpressions: selectorToProto(t.Term),
		})
	}
	return out
}

func taskToProto(t *api.Task, modRev uint64) *sluicev1.Task {
	out := &sluicev1.Task{
		ModRevision:   modRev,
		Name:          t.Name,
		Namespace:     t.Namespace,
		Job:           t.Job,
		Role:          t.Role,
		Resources:     resourceToProto(&t.Resources),
		Status:        taskStatusesOut[t.Status],
		Node:          t.Node,
		PriorityClass: t.PriorityClass,
		StartedAt:     timeToProto(t.StartedAt),
		NodeSelector:  cloneMap(t.NodeSelector),
		Affinity:      affinityToProto(t.Affinity),
		Ports:         slices.Clone(t.Ports),
		Labels:        cloneMap(t.Labels),
		Annotations:   cloneMap(t.Annotations),
		Preemptable:   ptr(t.Preemptable),
		DeviceIds:     slices.Clone(t.DeviceIDs),
		Guaranteed:    t.Guaranteed,
	}
	if t.HasPriority {
		out.Priority = ptr(t.Priority)
	}
	for _, tol := range t.Tolerations {
		out.Tolerations = append(out.Tolerations, &sluicev1.Toleration{
			Key: tol.Key, Operator: tolerationOpsOut[tol.Operator], Value: tol.Value, Effect: taintEffectsOut[tol.Effect],
		})
	}
	for _, s := range t.TopologySpread {
		out.TopologySpread = append(out.TopologySpread, &sluicev1.TopologySpreadConstraint{
			MaxSkew: s.MaxSkew, TopologyKey: s.TopologyKey, WhenUnsatisfiable: whenUnsatisfiableOut[s.WhenUnsatisfiable],
			Selector: cloneMap(s.Selector),
		})
	}
	for _, d := range t.Devices {
		out.Devices = append(out.Devices, &sluicev1.DeviceRequest{
			Type: d.Type, Count: d.Count, Memory: optionalBytes(d.Memory), Cores: d.Cores, Model: d.Model,
		})
	}
	return out
}
