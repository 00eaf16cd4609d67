package durable

import (
	"fmt"
	"net"
	"strings"
)

// Peer is a member of a cluster.
type Peer struct {
	// ID is the member's node id (--node-id), unique and stable for its lifetime.
	ID string
	// RaftAddr is the host:port of its raft transport.
	RaftAddr string
	// ClientAddr is the host:port clients reach its gRPC API at; followers send writers
	// there. Empty when not given.
	ClientAddr string
}

// ParsePeers parses a comma-separated list of members, each "id=raftaddr" or
// "id=raftaddr@grpcaddr", e.g. "n1=127.0.0.1:7001@127.0.0.1:50051,n2=...".
func ParsePeers(s string) ([]Peer, error) {
	var out []Peer
	ids := map[string]bool{}
	addrs := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		id, rest, ok := strings.Cut(item, "=")
		if !ok || id == "" || rest == "" {
			return nil, fmt.Errorf("peer %q: want id=raftaddr or id=raftaddr@grpcaddr", item)
		}
		raftAddr, clientAddr, _ := strings.Cut(rest, "@")
		if _, _, err := net.SplitHostPort(raftAddr); err != nil {
			return nil, fmt.Errorf("peer %q: raft address: %v", item, err)
		}
		if clientAddr != "" {
			if _, _, err := net.SplitHostPort(clientAddr); err != nil {
				return nil, fmt.Errorf("peer %q: gRPC address: %v", item, err)
			}
		}
		if ids[id] {
			return nil, fmt.Errorf("peer id %q listed twice", id)
		}
		if addrs[raftAddr] {
			return nil, fmt.Errorf("raft address %s listed twice", raftAddr)
		}
		ids[id], addrs[raftAddr] = true, true
		out = append(out, Peer{ID: id, RaftAddr: raftAddr, ClientAddr: clientAddr})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no peers in %q", s)
	}
	return out, nil
}

// FormatPeers is the inverse of ParsePeers.
func FormatPeers(peers []Peer) string {
	parts := make([]string, len(peers))
	for i, p := range peers {
		parts[i] = p.ID + "=" + p.RaftAddr
		if p.ClientAddr != "" {
			parts[i] += "@" + p.ClientAddr
		}
	}
	return strings.Join(parts, ",")
}
