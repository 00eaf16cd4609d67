package service

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/engine/durable"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// malformedCase is one file of testdata/malformed.
type malformedCase struct {
	name, method, field, reason string
	code                        codes.Code
	body                        []byte
}

func loadMalformed(t *testing.T) []malformedCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", "malformed", "*.textproto"))
	if err != nil || len(files) < 20 {
		t.Fatalf("malformed corpus: %d files, %v", len(files), err)
	}
	var out []malformedCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := malformedCase{name: filepath.Base(f), body: data}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "#"), ":")
			if !strings.HasPrefix(sc.Text(), "#") || !ok {
				break
			}
			v = strings.TrimSpace(v)
			switch strings.TrimSpace(k) {
			case "method":
				c.method = v
			case "code":
				var code codes.Code
				if err := code.UnmarshalJSON([]byte(`"` + v + `"`)); err != nil {
					t.Fatalf("%s: code %q: %v", c.name, v, err)
				}
				c.code = code
			case "field":
				c.field = v
			case "reason":
				c.reason = v
			}
		}
		if c.method == "" || c.code == codes.OK {
			t.Fatalf("%s: the header must give a method and a code", c.name)
		}
		out = append(out, c)
	}
	return out
}

// TestMalformedRequests sends each request of testdata/malformed to a server holding
// cluster m, in memory and with a durable store: each is answered with its code (and field
// and reason), and nothing changes: no revision moves and, durable, the raft log does not
// grow (a refused batch never reaches it).
func TestMalformedRequests(t *testing.T) {
	cases := loadMalformed(t)
	for _, mode := range []string{"memory", "durable"} {
		t.Run(mode, func(t *testing.T) {
			var rn *durable.Node
			su := setup{}
			if mode == "durable" {
				su.durable = &rn
			}
			h := newHarnessWith(t, su)
			h.apply("m", node("n1", cpu("8")), queue("q1", 1), job("j1", "q1", 1),
				taskMsg(&sluicev1.Task{Name: "t1", Job: "j1", Resources: cpu("1"), Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n1"}))
			h.apply("other", node("x", cpu("1")))
			before := revisions(h)
			var lastIndex uint64
			if rn != nil {
				lastIndex = rn.Status().LastIndex
			}
			for _, c := range cases {
				t.Run(strings.TrimSuffix(c.name, ".textproto"), func(t *testing.T) {
					err := h.sendMalformed(t, c)
					st := status.Convert(err)
					if st.Code() != c.code {
						t.Fatalf("answer %v, want %s", err, c.code)
					}
					fields, reason := fieldsOf(st)
					if c.field != "" && !slices.Contains(fields, c.field) {
						t.Errorf("violations %q do not name %s (%v)", fields, c.field, err)
					}
					if c.reason != "" && reason != c.reason {
						t.Errorf("reason %q, want %q (%v)", reason, c.reason, err)
					}
					if got := revisions(h); !sameRevisions(got, before) {
						t.Errorf("the store changed: revisions %v, were %v", got, before)
					}
					if rn != nil {
						if got := rn.Status().LastIndex; got != lastIndex {
							t.Errorf("the raft log grew from %d to %d", lastIndex, got)
						}
					}
				})
			}
		})
	}
}

func revisions(h *harness) map[string]uint64 {
	out := map[string]uint64{}
	for _, c := range h.store.Clusters() {
		out[c] = h.store.Revision(c)
	}
	return out
}

func sameRevisions(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// sendMalformed sends a case's request and returns the error it got: a call's, a Sync
// stream's end, or a Sync batch's rejection turned into a status.
func (h *harness) sendMalformed(t *testing.T, c malformedCase) error {
	t.Helper()
	ctx := ctxT(t)
	parse := func(m proto.Message) {
		t.Helper()
		if err := prototext.Unmarshal(c.body, m); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	var err error
	switch c.method {
	case "ApplyDeltas":
		req := &sluicev1.ApplyDeltasRequest{}
		parse(req)
		_, err = h.cs.ApplyDeltas(ctx, req)
	case "Schedule":
		req := &sluicev1.ScheduleRequest{}
		parse(req)
		_, err = h.sc.Schedule(ctx, req)
	case "CommitPlan":
		req := &sluicev1.CommitPlanRequest{}
		parse(req)
		_, err = h.sc.CommitPlan(ctx, req)
	case "DiscardPlan":
		req := &sluicev1.DiscardPlanRequest{}
		parse(req)
		_, err = h.sc.DiscardPlan(ctx, req)
	case "GetNode":
		req := &sluicev1.GetNodeRequest{}
		parse(req)
		_, err = h.cs.GetNode(ctx, req)
	case "ListTasks":
		req := &sluicev1.ListTasksRequest{}
		parse(req)
		_, err = h.cs.ListTasks(ctx, req)
	case "ExplainJob":
		req := &sluicev1.ExplainJobRequest{}
		parse(req)
		_, err = h.sc.ExplainJob(ctx, req)
	case "UpdateSchedulerConfig":
		req := &sluicev1.UpdateSchedulerConfigRequest{}
		parse(req)
		_, err = h.sc.UpdateSchedulerConfig(ctx, req)
	case "Sync", "SyncHello":
		req := &sluicev1.SyncRequest{}
		parse(req)
		err = h.syncMalformed(ctx, t, c.method == "Sync", req)
	default:
		t.Fatalf("%s: unknown method %q", c.name, c.method)
	}
	if err == nil {
		t.Fatalf("%s: accepted", c.name)
	}
	return err
}

func (h *harness) syncMalformed(ctx context.Context, t *testing.T, hello bool, m *sluicev1.SyncRequest) error {
	stream, err := h.cs.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hello {
		if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "m"}}}); err != nil {
			t.Fatal(err)
		}
		if r, err := stream.Recv(); err != nil || r.GetWelcome() == nil {
			t.Fatalf("hello: %v %v", r, err)
		}
	}
	if err := stream.Send(m); err != nil {
		t.Fatal(err)
	}
	r, err := stream.Recv()
	if err != nil {
		return err
	}
	rej := r.GetRejected()
	if rej == nil {
		t.Fatalf("answer %v, want a rejection", r)
	}
	st := status.New(codes.Code(rej.GetCode()), rej.GetMessage())
	br := &errdetails.BadRequest{}
	for _, v := range rej.GetViolations() {
		br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
	}
	if d, derr := st.WithDetails(br); derr == nil {
		st = d
	}
	return st.Err()
}
