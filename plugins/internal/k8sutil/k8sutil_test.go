package k8sutil

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

func node(name string, labels map[string]string) *api.Node {
	return &api.Node{Name: name, Labels: labels}
}

func req(key, op string, values ...string) api.SelectorRequirement {
	return api.SelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestRequirementMatches(t *testing.T) {
	n := node("n1", map[string]string{"zone": "a", "cores": "16", "name": "x"})
	tests := []struct {
		name string
		req  api.SelectorRequirement
		want bool
	}{
		{"In matches", req("zone", "In", "b", "a"), true},
		{"In other value", req("zone", "In", "b"), false},
		{"In missing key", req("disk", "In", "ssd"), false},
		{"In without values is invalid", req("zone", "In"), false},
		{"NotIn other value", req("zone", "NotIn", "b"), true},
		{"NotIn same value", req("zone", "NotIn", "a"), false},
		{"NotIn missing key matches", req("disk", "NotIn", "ssd"), true},
		{"Exists", req("zone", "Exists"), true},
		{"Exists missing", req("disk", "Exists"), false},
		{"Exists with values is invalid", req("zone", "Exists", "a"), false},
		{"DoesNotExist missing", req("disk", "DoesNotExist"), true},
		{"DoesNotExist present", req("zone", "DoesNotExist"), false},
		{"Gt below", req("cores", "Gt", "8"), true},
		{"Gt equal", req("cores", "Gt", "16"), false},
		{"Lt above", req("cores", "Lt", "32"), true},
		{"Lt equal", req("cores", "Lt", "16"), false},
		{"Gt non-integer bound is invalid", req("cores", "Gt", "8.5"), false},
		{"Gt two values is invalid", req("cores", "Gt", "1", "2"), false},
		{"Gt non-integer label", req("name", "Gt", "1"), false},
		{"Gt missing label", req("disk", "Gt", "1"), false},
		{"unknown operator", req("zone", "Equals", "a"), false},
		{"hostname falls back to the node name", req(LabelHostname, "In", "n1"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := compileRequirement(tc.req)
			if got := r.op != opInvalid && r.matches(n); got != tc.want {
				t.Errorf("matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRequiredNodeAffinity(t *testing.T) {
	n := node("n1", map[string]string{"zone": "a", "pool": "gpu"})
	term := func(rs ...api.SelectorRequirement) api.NodeSelectorTerm {
		return api.NodeSelectorTerm{MatchExpressions: rs}
	}
	tests := []struct {
		name     string
		selector map[string]string
		terms    []api.NodeSelectorTerm
		want     bool
	}{
		{"no constraint", nil, nil, true},
		{"selector matches", map[string]string{"pool": "gpu"}, nil, true},
		{"selector other value", map[string]string{"pool": "cpu"}, nil, false},
		{"selector missing key", map[string]string{"rack": "1"}, nil, false},
		{"terms are ORed", nil, []api.NodeSelectorTerm{term(req("zone", "In", "b")), term(req("zone", "In", "a"))}, true},
		{"expressions are ANDed", nil, []api.NodeSelectorTerm{term(req("zone", "In", "a"), req("pool", "In", "cpu"))}, false},
		{"an empty term matches nothing", nil, []api.NodeSelectorTerm{term()}, false},
		{"an invalid term is skipped", nil, []api.NodeSelectorTerm{term(req("zone", "In")), term(req("pool", "Exists"))}, true},
		{"selector and affinity both apply", map[string]string{"pool": "cpu"}, []api.NodeSelectorTerm{term(req("zone", "In", "a"))}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task := &api.Task{NodeSelector: tc.selector}
			if tc.terms != nil {
				task.Affinity = &api.Affinity{NodeRequired: tc.terms}
			}
			r := NewRequiredNodeAffinity(task)
			if got := r.Match(n); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
			if want := tc.selector == nil && tc.terms == nil; r.Empty() != want {
				t.Errorf("Empty = %v, want %v", r.Empty(), want)
			}
		})
	}
}

func TestPreferredNodeAffinity(t *testing.T) {
	n := node("n1", map[string]string{"zone": "a", "disk": "ssd"})
	pref := func(w int32, rs ...api.SelectorRequirement) api.PreferredTerm {
		return api.PreferredTerm{Weight: w, Term: api.NodeSelectorTerm{MatchExpressions: rs}}
	}
	task := &api.Task{Affinity: &api.Affinity{NodePreferred: []api.PreferredTerm{
		pref(50, req("disk", "Exists")),
		pref(20, req("zone", "In", "a")),
		pref(7, req("zone", "In", "b")),
		pref(0, req("zone", "In", "a")), // no weight: dropped
		pref(9),                         // no expression: dropped
	}}}
	p := NewPreferredNodeAffinity(task)
	if len(p) != 3 {
		t.Fatalf("compiled %d terms, want 3", len(p))
	}
	if got := p.Score(n); got != 70 {
		t.Errorf("Score = %d, want 70", got)
	}
	if got := NewPreferredNodeAffinity(&api.Task{}).Score(n); got != 0 {
		t.Errorf("Score without affinity = %d, want 0", got)
	}
}

func TestUntoleratedTaint(t *testing.T) {
	gpu := api.Taint{Key: "dedicated", Value: "gpu", Effect: EffectNoSchedule}
	soft := api.Taint{Key: "soft", Effect: EffectPreferNoSchedule}
	exec := api.Taint{Key: "maint", Value: "yes", Effect: EffectNoExecute}
	tests := []struct {
		name   string
		taints []api.Taint
		tols   []api.Toleration
		want   string // "" when all are tolerated
	}{
		{"no taints", nil, nil, ""},
		{"PreferNoSchedule is not a filter", []api.Taint{soft}, nil, ""},
		{"NoSchedule untolerated", []api.Taint{soft, gpu}, nil, "dedicated=gpu:NoSchedule"},
		{"NoExecute untolerated", []api.Taint{exec}, nil, "maint=yes:NoExecute"},
		{"Equal toleration", []api.Taint{gpu}, []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "gpu", Effect: EffectNoSchedule}}, ""},
		{"other value", []api.Taint{gpu}, []api.Toleration{{Key: "dedicated", Value: "cpu"}}, "dedicated=gpu:NoSchedule"},
		{"Exists on the key, any effect", []api.Taint{gpu, exec}, []api.Toleration{{Key: "dedicated", Operator: "Exists"}}, "maint=yes:NoExecute"},
		{"Exists on every key", []api.Taint{gpu, exec}, []api.Toleration{{Operator: "Exists"}}, ""},
		{"effect must match", []api.Taint{gpu}, []api.Toleration{{Key: "dedicated", Value: "gpu", Effect: EffectNoExecute}}, "dedicated=gpu:NoSchedule"},
		{"first in node order", []api.Taint{exec, gpu}, nil, "maint=yes:NoExecute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			taint, bad := UntoleratedTaint(tc.taints, tc.tols)
			got := ""
			if bad {
				got = TaintString(taint)
			}
			if got != tc.want {
				t.Errorf("untolerated = %q, want %q", got, tc.want)
			}
		})
	}
	if got := TaintString(api.Taint{Key: "k", Effect: EffectNoSchedule}); got != "k:NoSchedule" {
		t.Errorf("TaintString without value = %q", got)
	}
}

func TestToleratesUnschedulable(t *testing.T) {
	if ToleratesUnschedulable(nil) {
		t.Error("no tolerations tolerate a cordoned node")
	}
	if !ToleratesUnschedulable([]api.Toleration{{Key: TaintNodeUnschedulable, Operator: "Exists", Effect: EffectNoSchedule}}) {
		t.Error("the unschedulable toleration is not honoured")
	}
	if !ToleratesUnschedulable([]api.Toleration{{Operator: "Exists"}}) {
		t.Error("a wildcard toleration is not honoured")
	}
}

func TestTaskAffinity(t *testing.T) {
	owner := &api.Task{Name: "a", Namespace: "ns", Affinity: &api.Affinity{
		TaskAffinity: []api.TaskAffinityTerm{
			{Selector: map[string]string{"app": "ps"}, TopologyKey: "zone", Required: true},
			{Selector: map[string]string{"app": "db"}, TopologyKey: "zone", Weight: 5},
		},
		TaskAntiAffinity: []api.TaskAffinityTerm{{TopologyKey: LabelHostname, Weight: 3}},
	}}
	a := NewTaskAffinity(owner)
	if len(a.RequiredAffinity) != 1 || len(a.PreferredAffinity) != 1 || len(a.PreferredAntiAffinity) != 1 || len(a.RequiredAntiAffinity) != 0 {
		t.Fatalf("split wrong: %+v", a)
	}
	ps := &api.Task{Namespace: "ns", Labels: map[string]string{"app": "ps", "x": "y"}}
	other := &api.Task{Namespace: "other", Labels: map[string]string{"app": "ps"}}
	if !a.RequiredAffinity[0].Matches(ps) {
		t.Error("term does not match a task of its namespace with the labels")
	}
	if a.RequiredAffinity[0].Matches(other) {
		t.Error("term matches a task of another namespace")
	}
	if a.PreferredAntiAffinity[0].Matches(other) || !a.PreferredAntiAffinity[0].Matches(ps) {
		t.Error("an empty selector should match every task of the namespace only")
	}
	if !MatchesAll(a.RequiredAffinity, ps) || MatchesAll(nil, ps) {
		t.Error("MatchesAll wrong")
	}
	if !HasTaskAffinity(owner) || HasTaskAffinity(ps) || a.Empty() {
		t.Error("HasTaskAffinity/Empty wrong")
	}
}

// TestSpecKey: specs without selectors, affinity, tolerations or ports share the empty key, and
// each of those parts tells specs apart; SpecKeys gives what SpecKey gives.
func TestSpecKey(t *testing.T) {
	specs := map[string]*api.Task{
		"bare":       {Name: "a", Labels: map[string]string{"app": "x"}},
		"bare too":   {Name: "b", Resources: *api.NewResource(map[string]float64{"cpu": 2})},
		"selector":   {NodeSelector: map[string]string{"pool": "gpu"}},
		"selector 2": {NodeSelector: map[string]string{"pool": "cpu"}},
		"toleration": {Tolerations: []api.Toleration{{Key: "k", Operator: "Exists"}}},
		"port":       {Ports: []int32{80}},
		"affinity":   {Affinity: &api.Affinity{NodeRequired: []api.NodeSelectorTerm{{MatchExpressions: []api.SelectorRequirement{req("zone", "In", "a")}}}}},
	}
	var keys SpecKeys
	byKey := map[string]string{}
	for name, spec := range specs {
		k := SpecKey(spec)
		if got := keys.Key(spec); got != k {
			t.Errorf("%s: SpecKeys.Key %q, SpecKey %q", name, got, k)
		}
		if name == "bare" || name == "bare too" {
			if k != "" {
				t.Errorf("%s: key %q, want the empty key", name, k)
			}
			continue
		}
		if k == "" {
			t.Errorf("%s: the empty key", name)
		}
		if other, dup := byKey[k]; dup {
			t.Errorf("%s and %s share key %q", name, other, k)
		}
		byKey[k] = name
	}
	if SpecKey(nil) != "" || keys.Key(nil) != "" {
		t.Error("a nil spec has a key")
	}
}
