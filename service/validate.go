package service

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sluice-sched/sluice/engine/api"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// This file is the service's one validation step. Every request passes through it before
// anything else happens: a check* function per message records field violations with full
// paths (`batch.deltas[3].upsert_task.resources["cpu"]`), and the quantity parser that the
// converters use records its own. Nothing here reads the store; the store's referential checks
// (a task's job exists, ...) come after, and their errors are mapped to the same paths by
// applyBatch.

// maxStored bounds a stored amount (in its unit: thousandths or whole units) well inside
// int64, so that the float64 the engine keeps converts back to an integer quantity. The
// limits on names and maps are the server's (Limits).
const maxStored = 1 << 62

// clusterName is what a cluster may be called.
var clusterName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{0,62}$`)

// Path helpers: sub names a field of p, idx an element of a repeated field, key a map entry.
func sub(p, name string) string {
	if p == "" {
		return name
	}
	return p + "." + name
}

func idx(p string, i int) string { return p + "[" + strconv.Itoa(i) + "]" }

// key quotes a map key into a path; a key longer than maxPathKey bytes (a name beyond its
// limit) is cut, so that a path stays short in an error and in a log line.
func key(p, k string) string {
	if len(k) > maxPathKey {
		return p + "[" + strconv.Quote(strings.ToValidUTF8(k[:maxPathKey], "")) + "...]"
	}
	return p + "[" + strconv.Quote(k) + "]"
}

// maxPathKey bounds the map keys key writes whole.
const maxPathKey = 128

// checkCluster checks a request's cluster name.
func checkCluster(fe *fieldErrors, field, name string) {
	switch {
	case name == "":
		fe.add(field, "must not be empty")
	case !clusterName.MatchString(name):
		fe.add(field, "invalid cluster name %s: must match %s", quoteShort(name), clusterName)
	}
}

// checkName checks a required object name.
func checkName(fe *fieldErrors, field, name string) {
	if name == "" {
		fe.add(field, "must not be empty")
		return
	}
	checkRefName(fe, field, name)
}

// checkRefName checks a name that may be empty (an optional reference).
func checkRefName(fe *fieldErrors, field, name string) {
	if refNameOK(fe, name) {
		return
	}
	if max := fe.limits().MaxNameBytes; len(name) > max {
		fe.add(field, "%s", tooLarge(len(name), max, LimitNameBytes))
		return
	}
	if at, r, ok := hiddenRune(name); ok {
		fe.add(field, "must not contain %s (%U at byte %d), got %s", hiddenKind(r), r, at, quoteShort(name))
	}
}

// refNameOK reports whether checkRefName would record nothing for name.
func refNameOK(fe *fieldErrors, name string) bool {
	if len(name) > fe.limits().MaxNameBytes {
		return false
	}
	_, _, hidden := hiddenRune(name)
	return !hidden
}

// hiddenRune returns the first rune of s that a name may not hold, and its byte offset:
// invalid UTF-8, and every character that is invisible or changes how the text around it is
// shown, so that a name can never pass for another in a log line, an error or a CLI table.
// These are the control and format characters (categories Cc and Cf: the bidirectional
// controls U+202A-U+202E and U+2066-U+2069, the zero-width characters U+200B-U+200F, U+2060
// and U+FEFF, the soft hyphen, tags), surrogates and private-use characters (Cs, Co), line
// and paragraph separators, every space but U+0020 (Zs), and the characters that render as
// nothing although their category says otherwise: the combining grapheme joiner, variation
// selectors, the Hangul and Khmer fillers, the Mongolian free variation selectors and the
// braille blank.
func hiddenRune(s string) (int, rune, bool) {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
				return i, r, true
			}
		}
		if isHidden(r) {
			return i, r, true
		}
	}
	return 0, 0, false
}

// isHidden reports whether r is a character hiddenRune refuses.
func isHidden(r rune) bool {
	switch {
	case r < 0x80:
		return r < 0x20 || r == 0x7f
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Cs, unicode.Co, unicode.Zl, unicode.Zp, unicode.Zs):
		return true
	case unicode.In(r, unicode.Variation_Selector):
		return true
	}
	switch r {
	case 0x034F, // combining grapheme joiner
		0x115F, 0x1160, 0x3164, 0xFFA0, // Hangul fillers
		0x17B4, 0x17B5, // Khmer inherent vowels
		0x180B, 0x180C, 0x180D, 0x180F, // Mongolian free variation selectors
		0x2800, // braille pattern blank
		0xFFFC: // object replacement character
		return true
	}
	return r&0xFFFE == 0xFFFE // noncharacters U+xxFFFE and U+xxFFFF
}

// hiddenKind names the kind of character isHidden refused, for messages.
func hiddenKind(r rune) string {
	switch {
	case r == utf8.RuneError:
		return "invalid UTF-8"
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069, r == 0x200E, r == 0x200F, r == 0x061C:
		return "a bidirectional control character"
	case unicode.Is(unicode.Cc, r):
		return "a control character"
	case unicode.Is(unicode.Cf, r):
		return "an invisible format character"
	}
	return "an invisible character"
}

// checkNamespace checks a namespace, which may be empty (meaning "default").
func checkNamespace(fe *fieldErrors, field, ns string) {
	checkRefName(fe, field, ns)
	if strings.Contains(ns, "/") {
		fe.add(field, "must not contain '/', got %s", quoteShort(ns))
	}
}

// checkKeys checks a map of an object (labels, selectors, usage, ...): at most
// Limits.MaxLabels entries, and keys that are names (not empty, not too long, no hidden
// characters). The entries of a map over the limit are not looked at.
func checkKeys[V any](fe *fieldErrors, field string, m map[string]V) bool {
	if max := fe.limits().MaxLabels; len(m) > max {
		fe.add(field, "has %d entries, more than the limit of %d (%s)", len(m), max, LimitLabels)
		return false
	}
	if allKeys(m, func(k string) bool { return k != "" && refNameOK(fe, k) }) {
		return true // nothing to record: no need for the keys in order, or their paths
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "" {
			fe.add(key(field, k), "key must not be empty")
			continue
		}
		checkRefName(fe, key(field, k), k)
	}
	return true
}

// checkLabels checks a map of strings as checkKeys does, and that no value is longer than
// Limits.MaxLabelBytes.
func checkLabels(fe *fieldErrors, field string, m map[string]string) {
	if !checkKeys(fe, field, m) {
		return
	}
	max := fe.limits().MaxLabelBytes
	if allKeys(m, func(k string) bool { return len(m[k]) <= max }) {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if v := m[k]; len(v) > max {
			fe.add(key(field, k), "value %s", tooLarge(len(v), max, LimitLabelBytes))
		}
	}
}

// allKeys reports whether ok holds for every key of m, in no particular order: the checks of
// a map look at its keys in order, and build their paths, only when one will record something.
func allKeys[V any](m map[string]V, ok func(string) bool) bool {
	for k := range m {
		if !ok(k) {
			return false
		}
	}
	return true
}

// checkEnum records an enum value that the API does not define.
func checkEnum(fe *fieldErrors, field string, v int32, names map[int32]string) {
	if _, ok := names[v]; !ok {
		fe.add(field, "unknown value %d", v)
	}
}

// closedEnum is the generated enum type of a closed set (TaintEffect, ...).
type closedEnum interface {
	comparable
	protoreflect.Enum
	String() string
}

// checkClosed records a value of a closed set that known (the converter's map) does not hold:
// a number the API does not define, or UNSPECIFIED where the field is required. Where it is
// not, UNSPECIFIED passes and the converter gives it the default the proto documents.
func checkClosed[E closedEnum](fe *fieldErrors, field string, v E, known map[E]string, required bool) {
	if _, ok := known[v]; ok || (v.Number() == 0 && !required) {
		return
	}
	values := slices.SortedFunc(maps.Keys(known), func(a, b E) int { return int(a.Number()) - int(b.Number()) })
	names := make([]string, len(values))
	for i, e := range values {
		names[i] = e.String()
	}
	if v.Number() == 0 {
		fe.add(field, "must be set: one of %s", strings.Join(names, ", "))
		return
	}
	fe.add(field, "unknown value %d: must be one of %s", v.Number(), strings.Join(names, ", "))
}

// checkTimestamp records a malformed timestamp; nil is fine.
func checkTimestamp(fe *fieldErrors, field string, ts *timestamppb.Timestamp) {
	if ts != nil {
		if err := ts.CheckValid(); err != nil {
			fe.add(field, "invalid timestamp: %v", err)
		}
	}
}

// checkDuration records a malformed or negative duration; nil is fine.
func checkDuration(fe *fieldErrors, field string, d *durationpb.Duration) {
	if d == nil {
		return
	}
	if err := d.CheckValid(); err != nil {
		fe.add(field, "invalid duration: %v", err)
		return
	}
	if d.AsDuration() < 0 {
		fe.add(field, "must not be negative, got %s", d.AsDuration())
	}
}

// checkRange records a value outside [lo, hi].
func checkRange(fe *fieldErrors, field string, v, lo, hi int64) {
	if v < lo || v > hi {
		fe.add(field, "must be between %d and %d, got %d", lo, hi, v)
	}
}

// quoteShort quotes a user-supplied string for a message, cutting it if long.
func quoteShort(s string) string {
	if len(s) > 64 {
		return strconv.Quote(strings.ToValidUTF8(s[:64], "")) + "..."
	}
	return strconv.Quote(s)
}

// quantityUnit says how a resource's quantity is stored.
type quantityUnit int

const (
	// milliUnits: cpu and scalar resources, stored in thousandths.
	milliUnits quantityUnit = iota
	// wholeUnits: memory and ephemeral-storage in bytes, pods in tasks.
	wholeUnits
)

// unitOf says how the named resource is stored (see api.Resource).
func unitOf(name string) quantityUnit {
	switch name {
	case "memory", "pods":
		return wholeUnits
	}
	return milliUnits
}

// Limits of a quantity, by unit (see maxStored).
var (
	maxMilliQuantity = resource.NewQuantity(maxStored/1000, resource.DecimalSI)
	maxWholeQuantity = resource.NewQuantity(maxStored, resource.DecimalSI)
)

// quantity parses one quantity and returns it in its unit (thousandths for milliUnits). A
// malformed, negative or absurdly large quantity is recorded and yields 0, false.
func quantity(fe *fieldErrors, field, s string, unit quantityUnit) (int64, bool) {
	v, problem := parseQuantity(s, unit)
	if problem != "" {
		fe.add(field, "%s", problem)
		return 0, false
	}
	return v, true
}

// parseQuantity is quantity without recording: it returns what is wrong with s ("" if
// nothing).
func parseQuantity(s string, unit quantityUnit) (int64, string) {
	if s == "" {
		return 0, "must not be empty; give a quantity such as \"500m\", \"2\" or \"8Gi\""
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		return 0, "invalid quantity " + quoteShort(s) + ": expected a number with an optional suffix, such as \"500m\", \"2\", \"1.5\" or \"8Gi\""
	}
	if q.Sign() < 0 {
		return 0, "must not be negative, got " + quoteShort(s)
	}
	limit := maxMilliQuantity
	if unit == wholeUnits {
		limit = maxWholeQuantity
	}
	if q.Cmp(*limit) > 0 {
		return 0, "quantity " + quoteShort(s) + " is too large (at most " + limit.String() + ")"
	}
	if unit == wholeUnits {
		return q.Value(), ""
	}
	return q.MilliValue(), ""
}

// checkResourceName records a bad resource name (a map key of a resource list).
func checkResourceName(fe *fieldErrors, field, name string) {
	if problem := resourceNameProblem(fe, name); problem != "" {
		fe.add(field, "%s", problem)
	}
}

// resourceNameProblem says what is wrong with a resource name ("" if nothing).
func resourceNameProblem(fe *fieldErrors, name string) string {
	switch {
	case name == "":
		return "resource name must not be empty"
	case len(name) > fe.limits().MaxNameBytes:
		return "resource name " + tooLarge(len(name), fe.limits().MaxNameBytes, LimitNameBytes)
	case strings.IndexFunc(name, isHidden) >= 0 || strings.ContainsAny(name, " \t") || !utf8.ValidString(name):
		return "invalid resource name " + quoteShort(name)
	}
	return ""
}

// checkOffers records a node's allocatable that offers nothing (every amount zero).
func checkOffers(fe *fieldErrors, field string, r *api.Resource) {
	if r.IsEmpty() && r.MaxTaskNum == 0 {
		fe.add(field, "offers nothing: at least one resource must be more than zero")
	}
}

// Known string enums of the API.
var (
	selectorOps = []string{"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
)

// checkOneOf records a value not in allowed.
func checkOneOf(fe *fieldErrors, field, v string, allowed []string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	var shown []string
	for _, a := range allowed {
		if a != "" {
			shown = append(shown, strconv.Quote(a))
		}
	}
	fe.add(field, "unknown value %s: must be one of %s", quoteShort(v), strings.Join(shown, ", "))
}

func checkTaint(fe *fieldErrors, p string, t *sluicev1.Taint) {
	if t.GetKey() == "" {
		fe.add(sub(p, "key"), "must not be empty")
	}
	checkClosed(fe, sub(p, "effect"), t.GetEffect(), taintEffectsIn, true)
}

func checkToleration(fe *fieldErrors, p string, t *sluicev1.Toleration) {
	checkClosed(fe, sub(p, "operator"), t.GetOperator(), tolerationOpsIn, false)
	checkClosed(fe, sub(p, "effect"), t.GetEffect(), taintEffectsIn, false)
	exists := t.GetOperator() == sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS
	if exists && t.GetValue() != "" {
		fe.add(sub(p, "value"), "must be empty when operator is TOLERATION_OPERATOR_EXISTS")
	}
	if t.GetKey() == "" && !exists {
		fe.add(sub(p, "operator"), "must be TOLERATION_OPERATOR_EXISTS when key is empty")
	}
}

func checkRequirement(fe *fieldErrors, p string, r *sluicev1.NodeSelectorRequirement) {
	if r.GetKey() == "" {
		fe.add(sub(p, "key"), "must not be empty")
	}
	op, vals := r.GetOperator(), r.GetValues()
	checkOneOf(fe, sub(p, "operator"), op, selectorOps)
	switch op {
	case "In", "NotIn":
		if len(vals) == 0 {
			fe.add(sub(p, "values"), "operator %q needs at least one value", op)
		}
	case "Exists", "DoesNotExist":
		if len(vals) != 0 {
			fe.add(sub(p, "values"), "operator %q takes no values", op)
		}
	case "Gt", "Lt":
		if len(vals) != 1 {
			fe.add(sub(p, "values"), "operator %q needs exactly one integer value", op)
		} else if _, err := strconv.ParseInt(vals[0], 10, 64); err != nil {
			fe.add(idx(sub(p, "values"), 0), "operator %q needs an integer, got %s", op, quoteShort(vals[0]))
		}
	}
}

func checkTerm(fe *fieldErrors, p string, reqs []*sluicev1.NodeSelectorRequirement) {
	for i, r := range reqs {
		checkRequirement(fe, idx(p, i), r)
	}
}

func checkTaskAffinityTerm(fe *fieldErrors, p string, t *sluicev1.TaskAffinityTerm) {
	if len(t.GetSelector()) == 0 {
		fe.add(sub(p, "selector"), "must not be empty")
	}
	checkLabels(fe, sub(p, "selector"), t.GetSelector())
	if t.GetTopologyKey() == "" {
		fe.add(sub(p, "topology_key"), "must not be empty")
	}
	checkRange(fe, sub(p, "weight"), int64(t.GetWeight()), 0, 100)
}

func checkAffinity(fe *fieldErrors, p string, a *sluicev1.Affinity) {
	for i, t := range a.GetNodeRequired() {
		checkTerm(fe, sub(idx(sub(p, "node_required"), i), "match_expressions"), t.GetMatchExpressions())
	}
	for i, t := range a.GetNodePreferred() {
		tp := idx(sub(p, "node_preferred"), i)
		checkRange(fe, sub(tp, "weight"), int64(t.GetWeight()), 1, 100)
		checkTerm(fe, sub(tp, "match_expressions"), t.GetMatchExpressions())
	}
	for i, t := range a.GetTaskAffinity() {
		checkTaskAffinityTerm(fe, idx(sub(p, "task_affinity"), i), t)
	}
	for i, t := range a.GetTaskAntiAffinity() {
		checkTaskAffinityTerm(fe, idx(sub(p, "task_anti_affinity"), i), t)
	}
}

func checkSpread(fe *fieldErrors, p string, s *sluicev1.TopologySpreadConstraint) {
	if s.GetMaxSkew() < 0 {
		fe.add(sub(p, "max_skew"), "must not be negative, got %d", s.GetMaxSkew())
	}
	if s.GetTopologyKey() == "" {
		fe.add(sub(p, "topology_key"), "must not be empty")
	}
	checkClosed(fe, sub(p, "when_unsatisfiable"), s.GetWhenUnsatisfiable(), whenUnsatisfiableIn, false)
	checkLabels(fe, sub(p, "selector"), s.GetSelector())
}

// checkNode checks what the node converter does not: names, taints, usage, devices, NUMA
// topology. Quantities are checked as they are parsed.
func checkNode(fe *fieldErrors, p string, n *sluicev1.Node) {
	checkName(fe, sub(p, "name"), n.GetName())
	if len(n.GetAllocatable()) == 0 {
		fe.add(sub(p, "allocatable"), "must not be empty: a node offers resources")
	}
	checkLabels(fe, sub(p, "labels"), n.GetLabels())
	checkKeys(fe, sub(p, "usage"), n.GetUsage())
	for i, t := range n.GetTaints() {
		checkTaint(fe, idx(sub(p, "taints"), i), t)
	}
	for _, k := range slices.Sorted(maps.Keys(n.GetUsage())) {
		if v := n.GetUsage()[k]; math.IsNaN(v) || v < 0 || v > 100 {
			fe.add(key(sub(p, "usage"), k), "must be a percentage between 0 and 100, got %v", v)
		}
	}
	ids := map[string]int{}
	for i, d := range n.GetDevices() {
		dp := idx(sub(p, "devices"), i)
		checkName(fe, sub(dp, "id"), d.GetId())
		if j, dup := ids[d.GetId()]; dup && d.GetId() != "" {
			fe.add(sub(dp, "id"), "duplicate device id %s (also devices[%d])", quoteShort(d.GetId()), j)
		}
		ids[d.GetId()] = i
		if d.GetType() == "" {
			fe.add(sub(dp, "type"), "must not be empty")
		}
		checkRange(fe, sub(dp, "cores"), int64(d.GetCores()), 0, 100)
		checkLabels(fe, sub(dp, "attributes"), d.GetAttributes())
	}
	checkNumaTopology(fe, sub(p, "numa_topology"), n.GetNumaTopology())
}

func checkNodeGroups(fe *fieldErrors, p string, a *sluicev1.NodeGroupAffinity) {
	for i, g := range a.GetRequired() {
		checkName(fe, idx(sub(p, "required"), i), g)
	}
	for i, g := range a.GetPreferred() {
		checkName(fe, idx(sub(p, "preferred"), i), g)
	}
}

func checkQueue(fe *fieldErrors, p string, q *sluicev1.Queue) {
	checkName(fe, sub(p, "name"), q.GetName())
	checkRefName(fe, sub(p, "parent"), q.GetParent())
	if q.GetParent() == q.GetName() && q.GetName() != "" {
		fe.add(sub(p, "parent"), "a queue cannot be its own parent")
	}
	if q.GetWeight() < 0 {
		fe.add(sub(p, "weight"), "must not be negative, got %d", q.GetWeight())
	}
	checkEnum(fe, sub(p, "state"), int32(q.GetState()), sluicev1.QueueState_name)
	checkNodeGroups(fe, sub(p, "node_group_affinity"), q.GetNodeGroupAffinity())
	checkNodeGroups(fe, sub(p, "node_group_anti_affinity"), q.GetNodeGroupAntiAffinity())
	checkLabels(fe, sub(p, "labels"), q.GetLabels())
	checkLabels(fe, sub(p, "annotations"), q.GetAnnotations())
}

func checkJob(fe *fieldErrors, p string, j *sluicev1.Job) {
	checkName(fe, sub(p, "name"), j.GetName())
	checkNamespace(fe, sub(p, "namespace"), j.GetNamespace())
	checkRefName(fe, sub(p, "queue"), j.GetQueue())
	checkRefName(fe, sub(p, "priority_class"), j.GetPriorityClass())
	if j.GetMinAvailable() < 0 {
		fe.add(sub(p, "min_available"), "must not be negative, got %d", j.GetMinAvailable())
	}
	for role, n := range j.GetMinAvailableByRole() {
		rp := key(sub(p, "min_available_by_role"), role)
		if role == "" {
			fe.add(rp, "role must not be empty")
		}
		if n < 0 {
			fe.add(rp, "must not be negative, got %d", n)
		}
	}
	checkEnum(fe, sub(p, "phase"), int32(j.GetPhase()), sluicev1.JobPhase_name)
	checkTimestamp(fe, sub(p, "created_at"), j.GetCreatedAt())
	checkLabels(fe, sub(p, "labels"), j.GetLabels())
	checkLabels(fe, sub(p, "annotations"), j.GetAnnotations())
	checkNumaPolicyAnnotation(fe, p, j.GetAnnotations())
	if nt := j.GetNetworkTopology(); nt != nil {
		np := sub(p, "network_topology")
		checkClosed(fe, sub(np, "mode"), nt.GetMode(), topologyModesIn, true)
		if nt.GetHighestTierAllowed() < 1 {
			fe.add(sub(np, "highest_tier_allowed"), "must be at least 1, got %d", nt.GetHighestTierAllowed())
		}
	}
}

func checkTask(fe *fieldErrors, p string, t *sluicev1.Task) {
	checkName(fe, sub(p, "name"), t.GetName())
	checkNamespace(fe, sub(p, "namespace"), t.GetNamespace())
	checkName(fe, sub(p, "job"), t.GetJob())
	checkRefName(fe, sub(p, "role"), t.GetRole())
	checkRefName(fe, sub(p, "node"), t.GetNode())
	checkRefName(fe, sub(p, "priority_class"), t.GetPriorityClass())
	st := t.GetStatus()
	sp := sub(p, "status")
	switch st {
	case sluicev1.TaskStatus_TASK_STATUS_ALLOCATED, sluicev1.TaskStatus_TASK_STATUS_PIPELINED:
		fe.add(sp, "%s exists only inside a scheduling cycle; report PENDING, BINDING, BOUND, "+
			"RUNNING, RELEASING, SUCCEEDED, FAILED or UNKNOWN", st)
	case sluicev1.TaskStatus_TASK_STATUS_BINDING, sluicev1.TaskStatus_TASK_STATUS_BOUND,
		sluicev1.TaskStatus_TASK_STATUS_RUNNING, sluicev1.TaskStatus_TASK_STATUS_RELEASING:
		// An empty node keeps the stored one of a task already placed; the store refuses it
		// for any other task.
	case sluicev1.TaskStatus_TASK_STATUS_PENDING:
		if t.GetNode() != "" {
			fe.add(sub(p, "node"), "must be empty for a pending task, got %s", quoteShort(t.GetNode()))
		}
	case sluicev1.TaskStatus_TASK_STATUS_UNSPECIFIED:
		if t.GetNode() != "" {
			fe.add(sub(p, "node"), "must be empty when status is unset (the stored status stays); "+
				"report a node with its status, got %s", quoteShort(t.GetNode()))
		}
	default:
		checkEnum(fe, sp, int32(st), sluicev1.TaskStatus_name)
	}
	checkTimestamp(fe, sub(p, "started_at"), t.GetStartedAt())
	checkLabels(fe, sub(p, "node_selector"), t.GetNodeSelector())
	for i, tol := range t.GetTolerations() {
		checkToleration(fe, idx(sub(p, "tolerations"), i), tol)
	}
	if a := t.GetAffinity(); a != nil {
		checkAffinity(fe, sub(p, "affinity"), a)
	}
	for i, s := range t.GetTopologySpread() {
		checkSpread(fe, idx(sub(p, "topology_spread"), i), s)
	}
	for i, port := range t.GetPorts() {
		checkRange(fe, idx(sub(p, "ports"), i), int64(port), 1, 65535)
	}
	for i, d := range t.GetDevices() {
		dp := idx(sub(p, "devices"), i)
		if d.GetType() == "" {
			fe.add(sub(dp, "type"), "must not be empty")
		}
		if d.GetCount() < 0 {
			fe.add(sub(dp, "count"), "must not be negative, got %d", d.GetCount())
		}
		checkRange(fe, sub(dp, "cores"), int64(d.GetCores()), 0, 100)
	}
	checkLabels(fe, sub(p, "labels"), t.GetLabels())
	checkLabels(fe, sub(p, "annotations"), t.GetAnnotations())
	checkNumaPolicyAnnotation(fe, p, t.GetAnnotations())
	for i, id := range t.GetDeviceIds() {
		checkName(fe, idx(sub(p, "device_ids"), i), id)
	}
}

func checkPriorityClass(fe *fieldErrors, p string, pc *sluicev1.PriorityClass) {
	checkName(fe, sub(p, "name"), pc.GetName())
}

// checkRequiredNamespace checks a namespace that names something and may not be empty.
func checkRequiredNamespace(fe *fieldErrors, field, ns string) {
	if ns == "" {
		fe.add(field, "must not be empty")
		return
	}
	checkNamespace(fe, field, ns)
}

func checkQuota(fe *fieldErrors, p string, q *sluicev1.NamespaceQuota) {
	checkRequiredNamespace(fe, sub(p, "namespace"), q.GetNamespace())
}

// checkBudgetValue checks an integer ("3") or percentage ("50%") budget value.
func checkBudgetValue(fe *fieldErrors, field, v string) {
	num, pct := strings.CutSuffix(v, "%")
	n, err := strconv.Atoi(num)
	switch {
	case err != nil:
		fe.add(field, "must be an integer (\"3\") or a percentage (\"50%%\"), got %s", quoteShort(v))
	case n < 0:
		fe.add(field, "must not be negative, got %s", quoteShort(v))
	case pct && n > 100:
		fe.add(field, "a percentage must be at most 100%%, got %s", quoteShort(v))
	}
}

func checkBudget(fe *fieldErrors, p string, b *sluicev1.DisruptionBudget) {
	checkName(fe, sub(p, "name"), b.GetName())
	checkNamespace(fe, sub(p, "namespace"), b.GetNamespace())
	checkLabels(fe, sub(p, "selector"), b.GetSelector())
	switch {
	case b.MinAvailable != nil && b.MaxUnavailable != nil:
		fe.add(sub(p, "max_unavailable"), "only one of min_available and max_unavailable may be set")
	case b.MinAvailable != nil:
		checkBudgetValue(fe, sub(p, "min_available"), b.GetMinAvailable())
	case b.MaxUnavailable != nil:
		checkBudgetValue(fe, sub(p, "max_unavailable"), b.GetMaxUnavailable())
	default:
		fe.add(sub(p, "min_available"), "one of min_available and max_unavailable must be set")
	}
}

func checkHyperNode(fe *fieldErrors, p string, h *sluicev1.HyperNode) {
	checkName(fe, sub(p, "name"), h.GetName())
	if h.GetTier() < 1 {
		fe.add(sub(p, "tier"), "must be at least 1, got %d", h.GetTier())
	}
	seen := map[string]int{}
	for i, m := range h.GetMembers() {
		mp := idx(sub(p, "members"), i)
		checkName(fe, mp, m)
		if j, dup := seen[m]; dup {
			fe.add(mp, "duplicate member %s (also members[%d])", quoteShort(m), j)
		}
		seen[m] = i
	}
}

func checkRef(fe *fieldErrors, p string, r *sluicev1.ObjectRef) {
	kp := sub(p, "kind")
	switch k := r.GetKind(); k {
	case sluicev1.ObjectKind_OBJECT_KIND_UNSPECIFIED:
		fe.add(kp, "must be set")
	case sluicev1.ObjectKind_OBJECT_KIND_NAMESPACE_QUOTA:
		checkRequiredNamespace(fe, sub(p, "name"), r.GetName())
		return
	case sluicev1.ObjectKind_OBJECT_KIND_JOB, sluicev1.ObjectKind_OBJECT_KIND_TASK,
		sluicev1.ObjectKind_OBJECT_KIND_DISRUPTION_BUDGET:
		checkNamespace(fe, sub(p, "namespace"), r.GetNamespace())
	default:
		checkEnum(fe, kp, int32(k), sluicev1.ObjectKind_name)
	}
	checkName(fe, sub(p, "name"), r.GetName())
}

// enumFilter checks a repeated enum filter of a List request: every value must be defined and
// not the unspecified zero. It returns the values sorted without duplicates, and a key of
// them for page tokens (the same for the same set, in any order).
func enumFilter[E ~int32](fe *fieldErrors, field string, vals []E, names map[int32]string) ([]E, string) {
	var out []E
	for i, v := range vals {
		switch _, ok := names[int32(v)]; {
		case !ok:
			fe.add(idx(field, i), "unknown value %d", v)
		case v == 0:
			fe.add(idx(field, i), "must not be %s; leave %s empty for every value", names[0], field)
		default:
			out = append(out, v)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	parts := make([]string, len(out))
	for i, v := range out {
		parts[i] = strconv.Itoa(int(v))
	}
	return out, strings.Join(parts, ",")
}

// etagFormat is what the etags the service issues look like (state.ConfigEtag): a version and
// a digest. Clients treat them as opaque; the check only turns a mangled one into a field
// violation rather than a mismatch.
var etagFormat = regexp.MustCompile(`^[0-9]{1,20}-[0-9a-f]{16}$`)

// checkEtag checks an optional etag.
func checkEtag(fe *fieldErrors, field, etag string) {
	if etag != "" && !etagFormat.MatchString(etag) {
		fe.add(field, "invalid etag %s: pass the etag of GetSchedulerConfig, GetCluster or UpdateSchedulerConfig, or none", quoteShort(etag))
	}
}

// pageSize checks a request's page size (field "page_size") and returns the size to use:
// def when it is 0, at most limit.
func pageSize(fe *fieldErrors, size int32, def, limit int) int {
	switch {
	case size < 0:
		fe.add("page_size", "must not be negative, got %d", size)
		return def
	case size == 0:
		return def
	default:
		return min(int(size), limit)
	}
}
