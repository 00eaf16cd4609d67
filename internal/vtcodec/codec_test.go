package vtcodec

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// syncBatch is a Sync request with a node, a job and a task, each with string maps; the
// strings marked "@@@@" are where the tests put bytes of their own.
func syncBatch() *sluicev1.SyncRequest {
	return &sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: &sluicev1.DeltaBatch{Sequence: 7, Deltas: []*sluicev1.Delta{
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name:        "node-@@@@",
			Allocatable: map[string]string{"cpu": "32", "memory": "128Gi"},
			Labels:      map[string]string{"pool-@@@@": "general"},
		}}},
		{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: "job", MinAvailable: proto.Int32(2), Queue: "q@@@@"}}},
		{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{
			Name: "job-0", Job: "job", Role: "worker",
			Resources: map[string]string{"cpu": "2", "memory": "4G@@@@"},
		}}},
	}}}}
}

// seeds returns the encoding of syncBatch and, for each marked string, the same bytes with
// that mark made invalid UTF-8.
func seeds(t testing.TB) (valid []byte, invalid [][]byte) {
	b, err := proto.Marshal(syncBatch())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; {
		at := bytes.Index(b[i:], []byte("@@@@"))
		if at < 0 {
			break
		}
		bad := bytes.Clone(b)
		copy(bad[i+at:], "\xff\xfe\xff\xfe")
		invalid = append(invalid, bad)
		i += at + 4
	}
	if len(invalid) != 4 {
		t.Fatalf("found %d marks, want 4", len(invalid))
	}
	return b, invalid
}

func decode(c *Codec, b []byte, m Message) error {
	return c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(bytes.Clone(b))}, m)
}

// TestRefusesInvalidUTF8: a string that is not UTF-8, in a message field, a map key or a map
// value, nested three messages deep, is refused as the protobuf runtime refuses it; the same
// bytes with valid strings decode to what the runtime decodes.
func TestRefusesInvalidUTF8(t *testing.T) {
	c := New()
	valid, invalid := seeds(t)
	var got sluicev1.SyncRequest
	if err := decode(c, valid, &got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, syncBatch()) {
		t.Fatalf("decoded %v, want %v", &got, syncBatch())
	}
	for i, b := range invalid {
		var want sluicev1.SyncRequest
		if proto.Unmarshal(b, &want) == nil {
			t.Fatalf("mark %d: the runtime accepts it", i)
		}
		err := decode(c, b, &got)
		if err == nil || !strings.Contains(err.Error(), "invalid UTF-8") {
			t.Fatalf("mark %d: err %v, want invalid UTF-8", i, err)
		}
	}
}

// TestOtherWireTypesAreUnknownFields: a known field encoded with another wire type (a batch's
// sequence, a varint, sent as bytes) is kept as an unknown field, as the runtime keeps it,
// where the generated code alone would refuse the message.
func TestOtherWireTypesAreUnknownFields(t *testing.T) {
	c := New()
	var batch []byte
	batch = protowire.AppendTag(batch, 1, protowire.BytesType) // sequence, as bytes
	batch = protowire.AppendBytes(batch, []byte("seven"))
	batch = protowire.AppendTag(batch, 3, protowire.VarintType) // replace_all
	batch = protowire.AppendVarint(batch, 1)
	var b []byte
	b = protowire.AppendTag(b, 2, protowire.BytesType) // SyncRequest.batch
	b = protowire.AppendBytes(b, batch)
	var want, got sluicev1.SyncRequest
	if err := proto.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if err := decode(c, b, &got); err != nil {
		t.Fatalf("the codec refused what the runtime accepts: %v", err)
	}
	if !proto.Equal(&got, &want) || !got.GetBatch().GetReplaceAll() || len(got.GetBatch().ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("decoded %v, want %v with the sequence as an unknown field", &got, &want)
	}
}

// TestRoundTrip: what the codec encodes, the runtime decodes to an equal message, for a
// request and for a response with many kinds of fields.
func TestRoundTrip(t *testing.T) {
	c := New()
	for _, m := range []proto.Message{
		syncBatch(),
		&sluicev1.ScheduleResponse{Plan: &sluicev1.Plan{Id: "p1", BaseRevision: 9, Decisions: []*sluicev1.Decision{
			{Kind: &sluicev1.Decision_Bind{Bind: &sluicev1.BindDecision{Node: "n1", DeviceIds: []string{"gpu0", "gpu1"}}},
				RejectedReason: "why", Hypothetical: true},
		}}},
	} {
		data, err := c.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got := m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(data.Materialize(), got); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, m) {
			t.Fatalf("round trip of %T: %v, want %v", m, got, m)
		}
	}
}

// TestOtherMessagesUseTheRuntime: a message without generated methods (a well-known type)
// goes through the protobuf runtime both ways.
func TestOtherMessagesUseTheRuntime(t *testing.T) {
	c := New()
	data, err := c.Marshal(durationpb.New(1500))
	if err != nil {
		t.Fatal(err)
	}
	var d durationpb.Duration
	if err := c.Unmarshal(data, &d); err != nil || d.AsDuration() != 1500 {
		t.Fatalf("got %v, %v", d.AsDuration(), err)
	}
}

// TestUnmarshalReplaces: decoding into a message that held something leaves only what was
// decoded (the generated code appends to repeated fields).
func TestUnmarshalReplaces(t *testing.T) {
	c := New()
	valid, _ := seeds(t)
	m := syncBatch()
	if err := decode(c, valid, m); err != nil {
		t.Fatal(err)
	}
	if n := len(m.GetBatch().GetDeltas()); n != 3 {
		t.Fatalf("%d deltas after decoding into a used message, want 3", n)
	}
}

// TestNoRecursiveMessages: no message of Sluice's API can hold itself, however indirectly, so
// the depth of a valid message is bounded by the schema, far below MaxDepth, and the generated
// code's recursion is bounded too. A recursive message added to the API fails this test: the
// check's depth limit then matters and needs a test of its own.
func TestNoRecursiveMessages(t *testing.T) {
	var visit func(md protoreflect.MessageDescriptor, path []protoreflect.FullName)
	visit = func(md protoreflect.MessageDescriptor, path []protoreflect.FullName) {
		for _, p := range path {
			if p == md.FullName() {
				t.Fatalf("%s holds itself: %v", md.FullName(), append(path, md.FullName()))
			}
		}
		path = append(path, md.FullName())
		fds := md.Fields()
		for i := 0; i < fds.Len(); i++ {
			if sub := fds.Get(i).Message(); sub != nil {
				visit(sub, path)
			}
		}
	}
	n := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("sluice.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := 0; i < fd.Messages().Len(); i++ {
			visit(fd.Messages().Get(i), nil)
			n++
		}
		return true
	})
	if n < 20 {
		t.Fatalf("only %d messages in sluice.v1", n)
	}
}

// FuzzCodecMatchesProto: for any bytes, the codec accepts a Sync request, a Schedule response
// or an ApplyDeltas request exactly when the protobuf runtime does, and decodes it to an equal
// message; what it decoded, it encodes back to the same message.
func FuzzCodecMatchesProto(f *testing.F) {
	valid, invalid := seeds(f)
	f.Add(byte(0), valid)
	for _, b := range invalid {
		f.Add(byte(0), b)
	}
	plan, err := proto.Marshal(&sluicev1.ScheduleResponse{Plan: &sluicev1.Plan{Id: "p", Decisions: []*sluicev1.Decision{
		{Kind: &sluicev1.Decision_Bind{Bind: &sluicev1.BindDecision{Node: "n"}}}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(byte(1), plan)
	f.Add(byte(2), valid[2:])
	c := New()
	f.Fuzz(func(t *testing.T, kind byte, b []byte) {
		var want, got Message
		switch kind % 3 {
		case 0:
			want, got = &sluicev1.SyncRequest{}, &sluicev1.SyncRequest{}
		case 1:
			want, got = &sluicev1.ScheduleResponse{}, &sluicev1.ScheduleResponse{}
		default:
			want, got = &sluicev1.ApplyDeltasRequest{}, &sluicev1.ApplyDeltasRequest{}
		}
		werr := proto.Unmarshal(b, want)
		gerr := decode(c, b, got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("runtime: %v; codec: %v", werr, gerr)
		}
		if werr != nil {
			return
		}
		if !proto.Equal(want, got) {
			t.Fatalf("runtime decoded %v, codec %v", want, got)
		}
		data, err := c.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		again := want.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(data.Materialize(), again); err != nil {
			t.Fatal(err)
		}
		if proto.Equal(again, want) {
			return
		}
		// vtprotobuf encodes the well-known types (timestamps, durations) without the unknown
		// fields a decoded one kept; Sluice's own messages keep theirs.
		if !unknownInWellKnown(want.ProtoReflect()) {
			t.Fatalf("re-encoded: %v; want %v", again, want)
		}
		discardUnknown(again.ProtoReflect())
		discardUnknown(want.ProtoReflect())
		if !proto.Equal(again, want) {
			t.Fatalf("re-encoded: %v; want %v (unknown fields aside)", again, want)
		}
	})
}

// unknownInWellKnown reports whether a google.protobuf message inside m has unknown fields.
func unknownInWellKnown(m protoreflect.Message) bool {
	if strings.HasPrefix(string(m.Descriptor().FullName()), "google.protobuf.") && len(m.GetUnknown()) > 0 {
		return true
	}
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					found = unknownInWellKnown(mv.Message())
					return !found
				})
			}
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len() && !found; i++ {
				found = unknownInWellKnown(v.List().Get(i).Message())
			}
		case fd.Message() != nil:
			found = unknownInWellKnown(v.Message())
		}
		return !found
	})
	return found
}

// discardUnknown drops the unknown fields of m and of every message inside it.
func discardUnknown(m protoreflect.Message) {
	m.SetUnknown(nil)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					discardUnknown(mv.Message())
					return true
				})
			}
		case fd.IsList() && fd.Message() != nil:
			for i := 0; i < v.List().Len(); i++ {
				discardUnknown(v.List().Get(i).Message())
			}
		case fd.Message() != nil:
			discardUnknown(v.Message())
		}
		return true
	})
}

// TestHighFieldNumbers: a field numbered beyond the plan's slice is still known (FileOptions'
// uninterpreted_option is 999), and an unknown one beyond it sends the input to the runtime.
func TestHighFieldNumbers(t *testing.T) {
	c := New()
	opts := &descriptorpb.FileOptions{UninterpretedOption: []*descriptorpb.UninterpretedOption{{IdentifierValue: proto.String("x")}}}
	b, err := proto.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	p := c.plan(opts.ProtoReflect().Descriptor())
	if runtime, err := c.check(b, p, 0); runtime || err != nil {
		t.Fatalf("field 999: runtime %v, err %v", runtime, err)
	}
	b = protowire.AppendTag(b, 5000, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	if runtime, err := c.check(b, p, 0); !runtime || err != nil {
		t.Fatalf("unknown field 5000: runtime %v, err %v", runtime, err)
	}
}
