// Package vtcodec is Sluice's gRPC codec: it encodes and decodes Sluice's messages with the
// reflection-free methods vtprotobuf generates beside them (gen/go/sluice/v1/*_vtproto.pb.go),
// and any other message with the protobuf runtime.
//
// The generated methods skip two checks the protobuf runtime makes when it decodes, so the
// codec makes them first, in one pass over the wire bytes driven by the message's descriptor:
// every string field of a proto3 message (map keys and values included) must be valid UTF-8,
// and messages may nest at most as deep as the runtime allows (its default recursion limit).
// A message the runtime would refuse is refused here too; FuzzCodecMatchesProto checks that
// both accept the same inputs and decode them to equal messages.
//
// Both the server (grpc.ForceServerCodecV2) and the Go client (grpc.ForceCodecV2) use it; the
// wire format is protobuf's, so other clients see no difference.
package vtcodec

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	// The runtime's codec, the fallback, registers itself as "proto".
	_ "google.golang.org/grpc/encoding/proto"
)

// Name is the codec's name: gRPC's content subtype for protobuf.
const Name = "proto"

// MaxDepth is how deep messages may nest: the protobuf runtime's default recursion limit.
const MaxDepth = 10000

// Message is a message with vtprotobuf's generated methods.
type Message interface {
	proto.Message
	SizeVT() int
	MarshalToSizedBufferVT(dAtA []byte) (int, error)
	UnmarshalVT(dAtA []byte) error
}

// Codec is a gRPC CodecV2. Its zero value is not usable: use New. It is safe for concurrent
// use.
type Codec struct {
	fallback encoding.CodecV2
	// plans holds a *plan per message checked so far, by full name (built once each, under mu).
	plans sync.Map
	mu    sync.Mutex
}

// New returns a codec.
func New() *Codec { return &Codec{fallback: encoding.GetCodecV2(Name)} }

// Name returns "proto".
func (c *Codec) Name() string { return Name }

// Marshal encodes v.
func (c *Codec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(Message)
	if !ok {
		return c.fallback.Marshal(v)
	}
	size := m.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		buf := make([]byte, size)
		if _, err := m.MarshalToSizedBufferVT(buf); err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	if _, err := m.MarshalToSizedBufferVT((*buf)[:size]); err != nil {
		pool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// Unmarshal decodes data into v, replacing what v held.
func (c *Codec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(Message)
	if !ok {
		return c.fallback.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return c.unmarshal(buf.ReadOnlyData(), m)
}

// unmarshal checks b for m's type, then decodes it into m: with the generated code, or with
// the runtime when b holds what only the runtime decodes as the runtime does (see check). The
// generated code copies what it keeps (strings, bytes), so b may be reused afterwards.
func (c *Codec) unmarshal(b []byte, m Message) error {
	runtime, err := c.check(b, c.plan(m.ProtoReflect().Descriptor()), 0)
	if err != nil {
		return err
	}
	if runtime {
		return proto.Unmarshal(b, m)
	}
	proto.Reset(m)
	return m.UnmarshalVT(b)
}

// plan is what the check needs of one message type: its fields, indexed by number (Sluice's
// numbers are small; a field numbered beyond maxIndexed is looked up in more).
type plan struct {
	desc   protoreflect.MessageDescriptor
	fields []field
	more   map[protowire.Number]field
}

// maxIndexed is the highest field number a plan's slice holds.
const maxIndexed = 256

// field returns the plan's field numbered num.
func (p *plan) field(num protowire.Number) (field, bool) {
	if num < protowire.Number(len(p.fields)) {
		f := p.fields[num]
		return f, f.desc != nil
	}
	f, ok := p.more[num]
	return f, ok
}

// field is one field of a plan: its wire type (and whether a packed encoding is allowed too),
// and whether it is a string to check or a message (map entries included) to check inside.
type field struct {
	desc   protoreflect.FieldDescriptor
	wire   protowire.Type
	packed bool
	str    bool
	msg    *plan
}

// plan returns md's plan, building it, and the plans of the messages inside it, on first use.
// Plans are published once complete, so readers never see one being built.
func (c *Codec) plan(md protoreflect.MessageDescriptor) *plan {
	if p, ok := c.plans.Load(md.FullName()); ok {
		return p.(*plan)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	built := map[protoreflect.FullName]*plan{}
	p := c.build(md, built)
	for name, q := range built {
		c.plans.Store(name, q)
	}
	return p
}

// build returns md's plan: a published one, one built in this call (a message that holds
// itself refers to its own plan), or a new one.
func (c *Codec) build(md protoreflect.MessageDescriptor, built map[protoreflect.FullName]*plan) *plan {
	if p, ok := c.plans.Load(md.FullName()); ok {
		return p.(*plan)
	}
	if p, ok := built[md.FullName()]; ok {
		return p
	}
	p := &plan{desc: md}
	built[md.FullName()] = p
	fds := md.Fields()
	for i := 0; i < fds.Len(); i++ {
		fd := fds.Get(i)
		f := field{desc: fd, wire: wireType(fd.Kind())}
		f.packed = fd.IsList() && f.wire != protowire.BytesType
		switch fd.Kind() {
		case protoreflect.StringKind:
			// The runtime checks UTF-8 in proto3 files (and in editions that ask for it, which
			// Sluice's API does not use).
			f.str = fd.ParentFile().Syntax() == protoreflect.Proto3
		case protoreflect.MessageKind:
			f.msg = c.build(fd.Message(), built)
		}
		switch n := fd.Number(); {
		case n <= maxIndexed:
			if int(n) >= len(p.fields) {
				p.fields = append(p.fields, make([]field, int(n)+1-len(p.fields))...)
			}
			p.fields[n] = f
		default:
			if p.more == nil {
				p.more = map[protowire.Number]field{}
			}
			p.more[n] = f
		}
	}
	return p
}

// wireType returns the wire type of a field of kind k.
func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// errTooDeep is the error of a message nested deeper than MaxDepth.
var errTooDeep = errors.New("proto: exceeded maximum recursion depth")

// check walks b, an encoding of p's message, checking its strings and its messages inside. It
// reports runtime when anything but known fields with their own wire types comes (an unknown
// field, another wire type, a field number or an encoding the walk cannot read): the runtime
// then decodes b, keeping unknown fields and refusing what it refuses, exactly as without
// this codec.
func (c *Codec) check(b []byte, p *plan, depth int) (runtime bool, err error) {
	if depth > MaxDepth {
		return false, errTooDeep
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return true, nil
		}
		b = b[n:]
		f, known := p.field(num)
		if !known || (typ != f.wire && !(f.packed && typ == protowire.BytesType)) {
			return true, nil
		}
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return true, nil
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return true, nil
		}
		b = b[n:]
		switch {
		case f.str:
			if !utf8.Valid(v) {
				return false, fmt.Errorf("proto: string field %s contains invalid UTF-8", f.desc.FullName())
			}
		case f.msg != nil:
			if runtime, err := c.check(v, f.msg, depth+1); runtime || err != nil {
				return runtime, err
			}
		}
	}
	return false, nil
}

// DialOption makes a client connection use a new Codec for every call.
func DialOption() grpc.DialOption {
	return grpc.WithDefaultCallOptions(grpc.ForceCodecV2(New()))
}

// ServerOption makes a server use a new Codec for every call.
func ServerOption() grpc.ServerOption { return grpc.ForceServerCodecV2(New()) }
