package service

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// namedRef is what a TaskRef or a JobRef has.
type namedRef interface {
	GetNamespace() string
	GetName() string
}

// refName joins a reference as "namespace/name" for comparisons; "" for an unset one.
func refName(r namedRef) string {
	if r.GetName() == "" {
		return ""
	}
	return r.GetNamespace() + "/" + r.GetName()
}

// Every value the API defines in a closed set has the engine's spelling, and the spellings map
// back: a value added to the proto without a mapping fails here, not on a user's request.
func TestClosedSetsMapEveryValue(t *testing.T) {
	check := func(name string, desc protoreflect.EnumDescriptor, in map[protoreflect.EnumNumber]string, out map[string]protoreflect.EnumNumber) {
		t.Helper()
		vals := desc.Values()
		for i := range vals.Len() {
			n := vals.Get(i).Number()
			s, ok := in[n]
			switch {
			case n == 0 && ok:
				t.Errorf("%s: UNSPECIFIED has an engine spelling %q; it takes the proto's default instead", name, s)
			case n != 0 && !ok:
				t.Errorf("%s: %s has no engine spelling", name, vals.Get(i).Name())
			case n != 0 && out[s] != n:
				t.Errorf("%s: %q maps back to %d, want %d", name, s, out[s], n)
			}
		}
		if len(in) != vals.Len()-1 {
			t.Errorf("%s: %d spellings for %d values", name, len(in), vals.Len()-1)
		}
	}
	check("TaintEffect", sluicev1.TaintEffect(0).Descriptor(), numbers(taintEffectsIn), numbersOut(taintEffectsOut))
	check("TolerationOperator", sluicev1.TolerationOperator(0).Descriptor(), numbers(tolerationOpsIn), numbersOut(tolerationOpsOut))
	check("WhenUnsatisfiable", sluicev1.WhenUnsatisfiable(0).Descriptor(), numbers(whenUnsatisfiableIn), numbersOut(whenUnsatisfiableOut))
	check("NetworkTopologyMode", sluicev1.NetworkTopologyMode(0).Descriptor(), numbers(topologyModesIn), numbersOut(topologyModesOut))
}

func numbers[E closedEnum](m map[E]string) map[protoreflect.EnumNumber]string {
	out := map[protoreflect.EnumNumber]string{}
	for k, v := range m {
		out[k.Number()] = v
	}
	return out
}

func numbersOut[E closedEnum](m map[string]E) map[string]protoreflect.EnumNumber {
	out := map[string]protoreflect.EnumNumber{}
	for k, v := range m {
		out[k] = v.Number()
	}
	return out
}

// The closed sets go in as enums and come back as enums; an UNSPECIFIED value where the proto
// documents a default reads back as that default.
func TestClosedSetsRoundTrip(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	effects := []sluicev1.TaintEffect{
		sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE,
		sluicev1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE,
		sluicev1.TaintEffect_TAINT_EFFECT_NO_EXECUTE,
	}
	n := &sluicev1.Node{Name: "n1", Allocatable: cpu("4")}
	for i, e := range effects {
		n.Taints = append(n.Taints, &sluicev1.Taint{Key: "k" + string(rune('a'+i)), Value: "v", Effect: e})
	}
	jb := &sluicev1.Job{Name: "j", NetworkTopology: &sluicev1.NetworkTopology{
		Mode: sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_SOFT, HighestTierAllowed: 2}}
	tk := &sluicev1.Task{Name: "t", Job: "j",
		Tolerations: []*sluicev1.Toleration{
			{Key: "ka", Value: "v"}, // operator and effect unspecified
			{Key: "kb", Operator: sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS, Effect: sluicev1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE},
		},
		TopologySpread: []*sluicev1.TopologySpreadConstraint{
			{TopologyKey: "zone"}, // when_unsatisfiable unspecified
			{TopologyKey: "rack", WhenUnsatisfiable: sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY},
		},
	}
	h.apply("c1", &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: n}},
		&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: jb}}, taskMsg(tk))

	gn, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c1", Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, tn := range gn.GetNode().GetTaints() {
		if tn.GetEffect() != effects[i] {
			t.Errorf("taint %d: effect %v, want %v", i, tn.GetEffect(), effects[i])
		}
	}
	gj, err := h.cs.GetJob(ctx, &sluicev1.GetJobRequest{Cluster: "c1", Name: "j"})
	if err != nil {
		t.Fatal(err)
	}
	if m := gj.GetJob().GetNetworkTopology().GetMode(); m != sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_SOFT {
		t.Errorf("network topology mode %v", m)
	}
	gt, err := h.cs.GetTask(ctx, &sluicev1.GetTaskRequest{Cluster: "c1", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	wantTols := []*sluicev1.Toleration{
		{Key: "ka", Value: "v", Operator: sluicev1.TolerationOperator_TOLERATION_OPERATOR_EQUAL},
		{Key: "kb", Operator: sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS, Effect: sluicev1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE},
	}
	for i, tol := range gt.GetTask().GetTolerations() {
		if !proto.Equal(tol, wantTols[i]) {
			t.Errorf("toleration %d: %v, want %v", i, tol, wantTols[i])
		}
	}
	spread := gt.GetTask().GetTopologySpread()
	if len(spread) != 2 || spread[0].GetWhenUnsatisfiable() != sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE ||
		spread[1].GetWhenUnsatisfiable() != sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY {
		t.Errorf("topology spread: %v", spread)
	}
}

// An UNSPECIFIED value where one is required, and a number the API does not define, are
// INVALID_ARGUMENT with the field's path and the values it takes.
func TestClosedSetsRefused(t *testing.T) {
	h := newHarness(t)
	h.apply("c1", node("n1", cpu("4")), job("j1", "", 1))
	nodeWith := func(tn *sluicev1.Taint) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name: "n2", Allocatable: cpu("1"), Taints: []*sluicev1.Taint{tn}}}}
	}
	taskWith := func(tol *sluicev1.Toleration, s *sluicev1.TopologySpreadConstraint) *sluicev1.Delta {
		tk := &sluicev1.Task{Name: "t2", Job: "j1"}
		if tol != nil {
			tk.Tolerations = []*sluicev1.Toleration{tol}
		}
		if s != nil {
			tk.TopologySpread = []*sluicev1.TopologySpreadConstraint{s}
		}
		return taskMsg(tk)
	}
	jobWith := func(mode sluicev1.NetworkTopologyMode) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{
			Name: "j2", NetworkTopology: &sluicev1.NetworkTopology{Mode: mode, HighestTierAllowed: 1}}}}
	}
	exists := sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS
	tests := []struct {
		name  string
		delta *sluicev1.Delta
		field string
		// message holds what the violation's description must say.
		message []string
	}{
		{"taint effect unspecified", nodeWith(&sluicev1.Taint{Key: "k"}), "batch.deltas[0].upsert_node.taints[0].effect",
			[]string{"must be set", "TAINT_EFFECT_NO_SCHEDULE, TAINT_EFFECT_PREFER_NO_SCHEDULE, TAINT_EFFECT_NO_EXECUTE"}},
		{"taint effect unknown", nodeWith(&sluicev1.Taint{Key: "k", Effect: 9}), "batch.deltas[0].upsert_node.taints[0].effect",
			[]string{"unknown value 9", "TAINT_EFFECT_NO_EXECUTE"}},
		{"toleration operator unknown", taskWith(&sluicev1.Toleration{Key: "k", Operator: 3}, nil), "batch.deltas[0].upsert_task.tolerations[0].operator",
			[]string{"unknown value 3", "TOLERATION_OPERATOR_EQUAL, TOLERATION_OPERATOR_EXISTS"}},
		{"toleration effect unknown", taskWith(&sluicev1.Toleration{Key: "k", Effect: -1}, nil), "batch.deltas[0].upsert_task.tolerations[0].effect",
			[]string{"unknown value -1"}},
		{"exists with a value", taskWith(&sluicev1.Toleration{Key: "k", Operator: exists, Value: "v"}, nil), "batch.deltas[0].upsert_task.tolerations[0].value",
			[]string{"TOLERATION_OPERATOR_EXISTS"}},
		{"empty key without exists", taskWith(&sluicev1.Toleration{}, nil), "batch.deltas[0].upsert_task.tolerations[0].operator",
			[]string{"must be TOLERATION_OPERATOR_EXISTS when key is empty"}},
		{"when unsatisfiable unknown", taskWith(nil, &sluicev1.TopologySpreadConstraint{TopologyKey: "zone", WhenUnsatisfiable: 3}),
			"batch.deltas[0].upsert_task.topology_spread[0].when_unsatisfiable", []string{"unknown value 3", "WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY"}},
		{"network topology mode unspecified", jobWith(0), "batch.deltas[0].upsert_job.network_topology.mode",
			[]string{"must be set", "NETWORK_TOPOLOGY_MODE_HARD, NETWORK_TOPOLOGY_MODE_SOFT"}},
		{"network topology mode unknown", jobWith(4), "batch.deltas[0].upsert_job.network_topology.mode",
			[]string{"unknown value 4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.cs.ApplyDeltas(ctxT(t), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(tc.delta)})
			wantViolation(t, err, tc.field, ReasonInvalidField)
			if msg := wantCode(t, err, codes.InvalidArgument).Message(); !contains(msg, tc.message...) {
				t.Errorf("message %q does not say %q", msg, strings.Join(tc.message, `" and "`))
			}
		})
	}
}

// Decisions and job outcomes name tasks and jobs with references whose namespace is spelled
// out; a name holding '/' stays whole, which a joined "namespace/name" could not say.
func TestDecisionsNameTasksAndJobsByReference(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("4")),
		jobIn("team", "etl/nightly", ""),
		taskMsg(&sluicev1.Task{Name: "etl/nightly-0", Namespace: "team", Job: "etl/nightly", Resources: cpu("1")}),
		job("plain", "", 1), task("plain-0", "plain", cpu("1")))
	resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*sluicev1.BindDecision{
		"etl/nightly-0": {Task: &sluicev1.TaskRef{Namespace: "team", Name: "etl/nightly-0"}, Job: &sluicev1.JobRef{Namespace: "team", Name: "etl/nightly"}, Node: "n1"},
		"plain-0":       {Task: &sluicev1.TaskRef{Namespace: "default", Name: "plain-0"}, Job: &sluicev1.JobRef{Namespace: "default", Name: "plain"}, Node: "n1"},
	}
	for _, d := range resp.GetPlan().GetDecisions() {
		b := d.GetBind()
		if w := want[b.GetTask().GetName()]; !proto.Equal(b, w) {
			t.Errorf("bind %v, want %v", b, w)
		}
		delete(want, b.GetTask().GetName())
	}
	if len(want) != 0 {
		t.Errorf("no bind of %v", want)
	}
	for _, d := range resp.GetCommit().GetApplied() {
		if d.GetBind().GetTask().GetNamespace() == "" || d.GetBind().GetJob().GetNamespace() == "" {
			t.Errorf("applied decision without a namespace: %v", d)
		}
	}
	jobs := map[string]bool{}
	for _, o := range resp.GetPlan().GetJobs() {
		jobs[refName(o.GetJob())] = true
	}
	if !jobs["team/etl/nightly"] || !jobs["default/plain"] {
		t.Errorf("job outcomes name %v", jobs)
	}
	exp, err := h.sc.ExplainJob(ctx, &sluicev1.ExplainJobRequest{Cluster: "c1", Namespace: "team", Name: "etl/nightly"})
	if err != nil {
		t.Fatal(err)
	}
	if j := exp.GetOutcome().GetJob(); j.GetNamespace() != "team" || j.GetName() != "etl/nightly" {
		t.Errorf("ExplainJob names the job %v", j)
	}
}
