package sluice

import (
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// revisionFloor remembers, per cluster, the highest revision a call of this client saw
// (a write's acknowledgement, or a read's answer), so that a stale read it makes later, on any
// member, carries it as min_revision: the client reads its own writes and never goes back in
// time. Linearizable reads need no floor.
type revisionFloor struct {
	mu     sync.Mutex
	floors map[string]uint64
}

// note records the revision a reply carries (its "revision" field), for the request's cluster.
func (f *revisionFloor) note(args, reply any) {
	cluster, ok := stringField(args, "cluster")
	if !ok || cluster == "" {
		return
	}
	m, ok := reply.(proto.Message)
	if !ok {
		return
	}
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("revision")
	if fd == nil || fd.Kind() != protoreflect.Uint64Kind {
		return
	}
	rev := r.Get(fd).Uint()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.floors == nil {
		f.floors = map[string]uint64{}
	}
	if rev > f.floors[cluster] {
		f.floors[cluster] = rev
	}
}

// apply returns args with min_revision set to the cluster's floor when args is a stale read
// that left it unset; otherwise args itself. The caller's message is never changed.
func (f *revisionFloor) apply(args any) any {
	m, ok := args.(proto.Message)
	if !ok {
		return args
	}
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName("read")
	if fd == nil || fd.Message() == nil || fd.Message().FullName() != "sluice.v1.ReadOptions" || !r.Has(fd) {
		return args
	}
	ro, ok := r.Get(fd).Message().Interface().(*sluicev1.ReadOptions)
	if !ok || ro.GetConsistency() != sluicev1.ReadConsistency_READ_CONSISTENCY_STALE || ro.GetMinRevision() != 0 {
		return args
	}
	cluster, _ := stringField(args, "cluster")
	f.mu.Lock()
	floor := f.floors[cluster]
	f.mu.Unlock()
	if floor == 0 {
		return args
	}
	c := proto.Clone(m)
	cr := c.ProtoReflect()
	withFloor := proto.Clone(ro).(*sluicev1.ReadOptions)
	withFloor.MinRevision = floor
	cr.Set(fd, protoreflect.ValueOfMessage(withFloor.ProtoReflect()))
	return c
}

// stringField reads a string field of a message by name.
func stringField(msg any, name protoreflect.Name) (string, bool) {
	m, ok := msg.(proto.Message)
	if !ok {
		return "", false
	}
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName(name)
	if fd == nil || fd.Kind() != protoreflect.StringKind {
		return "", false
	}
	return r.Get(fd).String(), true
}
