package scenario

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Result is the verdict on one scenario.
type Result struct {
	// Name is the scenario's name, or the file's path when it did not parse.
	Name string
	// Failure is empty when the scenario passed; otherwise it is the first
	// difference (or error) in words.
	Failure string
}

// Passed reports whether the scenario passed.
func (r Result) Passed() bool { return r.Failure == "" }

// String returns "PASS name" or "FAIL name: failure".
func (r Result) String() string {
	if r.Passed() {
		return "PASS " + r.Name
	}
	return "FAIL " + r.Name + ": " + r.Failure
}

// Run plays sc through the gRPC API on conn, in the named cluster, and
// compares the outcome with sc.Expect. The cluster is replaced entirely, so
// each scenario should have a cluster of its own (its name, for example).
//
// The steps are those of FORMAT.md: load the cluster with a replace-all
// batch (which creates it), set the scheduler configuration (a rejected
// configuration fails the scenario), then for each cycle i call Schedule in propose mode
// with the clock at sc.CycleTime(i), commit the plan, and act as the
// resource manager: every bound task becomes Running on its node (started
// at the cycle's clock), every evicted task becomes Pending without a node,
// pipelined tasks are left alone. After the last cycle the job phases,
// queue figures and explanations that the expectations mention are read
// back and everything is compared with Compare.
func Run(ctx context.Context, conn grpc.ClientConnInterface, sc *Scenario, cluster string) Result {
	res := Result{Name: sc.Name}
	out, err := play(ctx, conn, sc, cluster)
	if err == nil {
		err = Compare(sc.Expect, out)
	}
	if err != nil {
		res.Failure = err.Error()
	}
	return res
}

// play runs the scenario's cycles and reads back what the expectations
// need.
func play(ctx context.Context, conn grpc.ClientConnInterface, sc *Scenario, cluster string) (*Outcome, error) {
	state := sluicev1.NewClusterStateServiceClient(conn)
	sched := sluicev1.NewSchedulerServiceClient(conn)

	// The batch first: it creates the cluster, which a configuration alone does not.
	if _, err := state.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{
		Cluster: cluster, Batch: sc.Cluster.Batch(),
	}); err != nil {
		return nil, fmt.Errorf("cluster rejected: %s", StatusText(err))
	}
	if _, err := sched.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{
		Cluster: cluster, Config: sc.Config,
	}); err != nil {
		return nil, fmt.Errorf("config rejected: %s", StatusText(err))
	}

	out := &Outcome{Binds: map[string]Bind{}, Pipelined: map[string]string{}}
	cycles := max(sc.Cycles, 1)
	for i := range cycles {
		now := sc.CycleTime(i)
		where := fmt.Sprintf("cycle %d", i+1)
		resp, err := sched.Schedule(ctx, &sluicev1.ScheduleRequest{
			Cluster: cluster,
			Mode:    sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE,
			Now:     timestamppb.New(now),
		})
		if err != nil {
			return nil, fmt.Errorf("%s: Schedule: %s", where, StatusText(err))
		}
		plan := resp.GetPlan()
		if plan.GetId() == "" {
			return nil, fmt.Errorf("%s: Schedule returned a plan without an id", where)
		}
		commit, err := sched.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: cluster, PlanId: plan.GetId()})
		if err != nil {
			return nil, fmt.Errorf("%s: CommitPlan %s: %s", where, plan.GetId(), StatusText(err))
		}
		if commit.GetPlan() != nil {
			// The committed record, every page, each decision with its outcome.
			if plan, err = sluice.WholePlan(ctx, sched, commit.GetPlan(), commit.GetNextPageToken()); err != nil {
				return nil, fmt.Errorf("%s: GetPlan %s: %s", where, plan.GetId(), StatusText(err))
			}
		}
		for _, d := range plan.GetDecisions() {
			if d.GetOutcome() == sluicev1.DecisionOutcome_DECISION_OUTCOME_REJECTED {
				return nil, fmt.Errorf("%s: commit rejected %s: %s", where, DescribeDecision(d), d.GetRejectedReason())
			}
		}
		if rej := commit.GetRejected(); len(rej) > 0 {
			return nil, fmt.Errorf("%s: commit rejected %s: %s (and %d more)",
				where, DescribeDecision(rej[0].GetDecision()), rej[0].GetReason(), len(rej)-1)
		}

		batch := &sluicev1.DeltaBatch{}
		last := i == cycles-1
		for _, d := range plan.GetDecisions() {
			switch k := d.GetKind().(type) {
			case *sluicev1.Decision_Bind:
				b := k.Bind
				task := sluice.FullName(b.GetTask())
				out.Binds[task] = Bind{Task: task, Job: sluice.FullName(b.GetJob()), Node: b.GetNode(), DeviceIDs: b.GetDeviceIds(), Cycle: i}
				t, err := getTask(ctx, state, cluster, b.GetTask())
				if err != nil {
					return nil, fmt.Errorf("%s: after bind: %w", where, err)
				}
				t.Status = sluicev1.TaskStatus_TASK_STATUS_RUNNING
				t.Node = b.GetNode()
				t.DeviceIds = b.GetDeviceIds()
				t.StartedAt = timestamppb.New(now)
				batch.Deltas = append(batch.Deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}})
			case *sluicev1.Decision_Evict:
				e := k.Evict
				out.Evictions = append(out.Evictions, Eviction{Task: sluice.FullName(e.GetTask()), Job: sluice.FullName(e.GetJob()), Node: e.GetNode(), Cycle: i})
				t, err := getTask(ctx, state, cluster, e.GetTask())
				if err != nil {
					return nil, fmt.Errorf("%s: after eviction: %w", where, err)
				}
				t.Status = sluicev1.TaskStatus_TASK_STATUS_PENDING
				t.Node = ""
				t.DeviceIds = nil
				t.StartedAt = nil
				batch.Deltas = append(batch.Deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}})
			case *sluicev1.Decision_Pipeline:
				if last {
					out.Pipelined[sluice.FullName(k.Pipeline.GetTask())] = k.Pipeline.GetNode()
				}
			default:
				return nil, fmt.Errorf("%s: plan %s has a decision of unknown kind", where, plan.GetId())
			}
		}
		if len(batch.Deltas) > 0 {
			if _, err := state.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: cluster, Batch: batch}); err != nil {
				return nil, fmt.Errorf("%s: reporting the plan's effects: %s", where, StatusText(err))
			}
		}
	}

	if err := readBack(ctx, state, sched, cluster, sc.Expect, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readBack fills the outcome's job phases, queue figures and explanations
// for what the expectations mention.
func readBack(ctx context.Context, state sluicev1.ClusterStateServiceClient, sched sluicev1.SchedulerServiceClient,
	cluster string, exp *Expect, out *Outcome) error {
	if exp.JobPhases != nil {
		out.JobPhases = map[string]string{}
		for _, j := range slices.Sorted(maps.Keys(exp.JobPhases)) {
			ns, name := SplitName(j)
			resp, err := state.GetJob(ctx, &sluicev1.GetJobRequest{Cluster: cluster, Namespace: ns, Name: name})
			if err != nil {
				return fmt.Errorf("jobPhases: GetJob %s: %s", j, StatusText(err))
			}
			out.JobPhases[j] = PhaseName(resp.GetJob().GetPhase())
		}
	}
	if exp.Queues != nil {
		out.Queues = map[string]QueueAmounts{}
		for _, q := range slices.Sorted(maps.Keys(exp.Queues)) {
			resp, err := state.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: cluster, Name: q})
			if err != nil {
				return fmt.Errorf("queues: GetQueue %s: %s", q, StatusText(err))
			}
			st := resp.GetQueue().GetStatus()
			out.Queues[q] = QueueAmounts{Deserved: st.GetDeserved(), Allocated: st.GetAllocated()}
		}
	}
	if exp.Unschedulable != nil {
		out.Explanations = map[string]string{}
		for _, j := range slices.Sorted(maps.Keys(exp.Unschedulable)) {
			ns, name := SplitName(j)
			resp, err := sched.ExplainJob(ctx, &sluicev1.ExplainJobRequest{Cluster: cluster, Namespace: ns, Name: name})
			if err != nil {
				return fmt.Errorf("unschedulable: ExplainJob %s: %s", j, StatusText(err))
			}
			out.Explanations[j] = resp.GetOutcome().GetExplanation().GetSummary()
		}
	}
	return nil
}

// getTask reads back the task a decision names.
func getTask(ctx context.Context, state sluicev1.ClusterStateServiceClient, cluster string, ref *sluicev1.TaskRef) (*sluicev1.Task, error) {
	full := sluice.FullName(ref)
	resp, err := state.GetTask(ctx, &sluicev1.GetTaskRequest{Cluster: cluster, Namespace: ref.GetNamespace(), Name: ref.GetName()})
	if err != nil {
		return nil, fmt.Errorf("GetTask %s: %s", full, StatusText(err))
	}
	if resp.GetTask() == nil {
		return nil, fmt.Errorf("GetTask %s: no task in the response", full)
	}
	return resp.GetTask(), nil
}

// SplitName splits "namespace/name"; a name without a namespace is in
// "default".
func SplitName(full string) (namespace, name string) {
	if ns, n, ok := strings.Cut(full, "/"); ok {
		return ns, n
	}
	return "default", full
}

// PhaseName returns the scenario format's name of a job phase: Pending,
// Inqueue, Running, Completed or Unknown ("Unspecified" for the zero value).
func PhaseName(p sluicev1.JobPhase) string {
	switch p {
	case sluicev1.JobPhase_JOB_PHASE_PENDING:
		return "Pending"
	case sluicev1.JobPhase_JOB_PHASE_INQUEUE:
		return "Inqueue"
	case sluicev1.JobPhase_JOB_PHASE_RUNNING:
		return "Running"
	case sluicev1.JobPhase_JOB_PHASE_COMPLETED:
		return "Completed"
	case sluicev1.JobPhase_JOB_PHASE_UNKNOWN:
		return "Unknown"
	case sluicev1.JobPhase_JOB_PHASE_UNSPECIFIED:
		return "Unspecified"
	}
	return p.String()
}

// DescribeDecision returns a decision in words, for example
// "bind default/t-0 -> n1".
func DescribeDecision(d *sluicev1.Decision) string {
	switch k := d.GetKind().(type) {
	case *sluicev1.Decision_Bind:
		return fmt.Sprintf("bind %s -> %s", sluice.FullName(k.Bind.GetTask()), k.Bind.GetNode())
	case *sluicev1.Decision_Pipeline:
		return fmt.Sprintf("pipeline %s -> %s", sluice.FullName(k.Pipeline.GetTask()), k.Pipeline.GetNode())
	case *sluicev1.Decision_Evict:
		return fmt.Sprintf("evict %s from %s", sluice.FullName(k.Evict.GetTask()), k.Evict.GetNode())
	}
	return "empty decision"
}

// StatusText describes an error from a gRPC call: the status code, the
// message and the field violations of any BadRequest detail, for example
// `InvalidArgument: bad config (tiers[0].plugins[1].name: unknown plugin "foo")`.
func StatusText(err error) string {
	st, ok := status.FromError(err)
	if !ok {
		return err.Error()
	}
	var vs []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				vs = append(vs, v.GetField()+": "+v.GetDescription())
			}
		}
	}
	s := st.Code().String() + ": " + st.Message()
	if len(vs) > 0 {
		s += " (" + strings.Join(vs, "; ") + ")"
	}
	return s
}

// RunFiles runs the scenarios in paths, each a file or a directory (whose
// *.yaml and *.yml files run in name order), each in a cluster named after
// the scenario. It prints "PASS name" or "FAIL name: difference" per
// scenario (a file that cannot be read or parsed is a FAIL line naming it)
// and last "N passed, N failed".
func RunFiles(ctx context.Context, conn grpc.ClientConnInterface, paths []string, out io.Writer) (passed, failed int) {
	seen := map[string]string{}
	for _, file := range expandPaths(paths, func(path string, err error) {
		fmt.Fprintf(out, "FAIL %s: %v\n", path, err)
		failed++
	}) {
		res := runFile(ctx, conn, file, seen)
		fmt.Fprintln(out, res)
		if res.Passed() {
			passed++
		} else {
			failed++
		}
	}
	fmt.Fprintf(out, "%d passed, %d failed\n", passed, failed)
	return passed, failed
}

func runFile(ctx context.Context, conn grpc.ClientConnInterface, file string, seen map[string]string) Result {
	sc, err := LoadFile(file)
	if err != nil {
		return Result{Name: file, Failure: err.Error()}
	}
	if other, dup := seen[sc.Name]; dup {
		return Result{Name: sc.Name, Failure: fmt.Sprintf("duplicate scenario name (also in %s)", other)}
	}
	seen[sc.Name] = file
	return Run(ctx, conn, sc, ClusterName(sc.Name))
}

// LoadFile reads and parses one scenario file. Its error is worded as the
// runner's FAIL line has it, without the file's name: the key's path, then
// what is wrong ("cluster.nodes[0].allocatable.cpu: bad quantity ...").
func LoadFile(file string) (*Scenario, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, pathErr(err)
	}
	sc, err := Parse(file, data)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			msg := pe.Msg
			if pe.Path != "" {
				msg = pe.Path + ": " + msg
			}
			return nil, errors.New(msg)
		}
		return nil, err
	}
	return sc, nil
}

// ClusterName turns a scenario name into a valid cluster name (lower-case letters, digits,
// dots and dashes, at most 63 characters): other characters become dashes, and a name that had
// to change is shortened and given a hash of the original, so distinct scenarios never share a
// cluster.
func ClusterName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	out := strings.TrimLeft(b.String(), ".-")
	if out == name && len(out) <= 63 && out != "" {
		return out
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:4])
	if len(out) > 54 {
		out = out[:54]
	}
	if out == "" {
		return "s-" + suffix
	}
	return strings.TrimRight(out, ".-") + "-" + suffix
}

// expandPaths lists the scenario files named by paths; problems are
// reported through bad.
func expandPaths(paths []string, bad func(path string, err error)) []string {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			bad(p, pathErr(err))
			continue
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		inDir, err := Files(p)
		if err != nil {
			bad(p, err)
			continue
		}
		files = append(files, inDir...)
	}
	return files
}

// Files lists the scenario files (*.yaml and *.yml, at any depth) of a
// directory, in name order.
func Files(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	return files, nil
}

// pathErr drops the operation and path from an *fs.PathError, since the
// path is printed anyway.
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
