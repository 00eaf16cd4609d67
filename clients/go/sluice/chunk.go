package sluice

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// DefaultMaxChunkBytes is the default size bound of one chunk of a chunked resync: 1 MiB,
// well under gRPC's default 4 MiB message limit.
const DefaultMaxChunkBytes = 1 << 20

// chunkOverhead bounds what a ResyncChunk adds to its deltas: the sequence and last fields.
const chunkOverhead = 16

// ResyncChunks splits a whole cluster's deltas (upserts) into the chunks of one chunked
// resync with sequence seq: each chunk's encoding is at most maxBytes (a delta larger than
// that goes alone in a chunk), the last chunk has Last set, and there is at least one chunk
// (empty for an empty cluster). maxBytes <= 0 means DefaultMaxChunkBytes. The server swaps the
// cluster when the last chunk arrives; see sluice.v1.ResyncChunk.
func ResyncChunks(seq uint64, deltas []*sluicev1.Delta, maxBytes int) []*sluicev1.ResyncChunk {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxChunkBytes
	}
	var out []*sluicev1.ResyncChunk
	start, size := 0, chunkOverhead
	for i, d := range deltas {
		n := proto.Size(d)
		n += protowire.SizeTag(2) + protowire.SizeVarint(uint64(n))
		if i > start && size+n > maxBytes {
			out = append(out, &sluicev1.ResyncChunk{Sequence: seq, Deltas: deltas[start:i:i]})
			start, size = i, chunkOverhead
		}
		size += n
	}
	out = append(out, &sluicev1.ResyncChunk{Sequence: seq, Deltas: deltas[start:len(deltas):len(deltas)], Last: true})
	return out
}
