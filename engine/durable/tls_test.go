package durable

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/internal/certs"
	"github.com/sluice-sched/sluice/internal/testnet"
	"github.com/sluice-sched/sluice/internal/testpki"
)

// TestClusterOverMutualTLS: three members whose raft transport is mutual TLS, one of them
// with a certificate of another CA. The two trusted members elect a leader and replicate to
// each other; the third never gets an entry, whichever side dials.
func TestClusterOverMutualTLS(t *testing.T) {
	ca, intruders := testpki.NewCA(t, "members"), testpki.NewCA(t, "intruders")
	raftAddrs := testnet.FreeAddrs(t, 3)
	var peers []Peer
	for i, a := range raftAddrs {
		peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i+1), RaftAddr: a})
	}
	stores := make([]*state.Store, 3)
	nodes := make([]*Node, 3)
	for i, p := range peers {
		issuer := ca
		if i == 2 {
			issuer = intruders
		}
		pair := issuer.Peer(t, p.ID)
		// Every member trusts the members' CA only.
		r, err := certs.Load(certs.Files{Cert: pair.CertFile, Key: pair.KeyFile, CA: ca.CertFile})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = state.New()
		n, err := Open(stores[i], Options{DataDir: t.TempDir(), NodeID: p.ID, RaftAddr: p.RaftAddr, Peers: peers,
			Bootstrap: true, ElectionTimeout: 300 * time.Millisecond, TLS: r})
		if err != nil {
			t.Fatal(err)
		}
		nodes[i] = n
		t.Cleanup(func() { _ = n.Close(5 * time.Second) })
	}
	waitFor(t, 15*time.Second, "a leader among the trusted members", func() bool { return nodes[0].IsLeader() || nodes[1].IsLeader() })
	l := 0
	if nodes[1].IsLeader() {
		l = 1
	}
	if nodes[2].IsLeader() {
		t.Fatal("the untrusted member leads")
	}
	if _, err := stores[l].Apply("c", nodesBatch(0, 3)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "replication to the trusted follower", func() bool { return stores[1-l].Revision("c") == 1 })
	time.Sleep(time.Second)
	if rev := stores[2].Revision("c"); rev != 0 {
		t.Fatalf("the untrusted member has revision %d", rev)
	}
}
