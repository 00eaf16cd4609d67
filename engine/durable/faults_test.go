package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/internal/certs"
	"github.com/sluice-sched/sluice/internal/testnet"
	"github.com/sluice-sched/sluice/internal/testpki"
)

// TestPartitionedLeader cuts the leader of a 3-member cluster off from both followers (plain
// TCP and mutual TLS): within about an election timeout it stops answering linearizable reads
// with an error wrapping state.ErrUnavailable (not a *NotLeaderError: it knows no leader), the
// others elect a leader that takes writes, and once healed the old leader follows it and
// applies those writes.
func TestPartitionedLeader(t *testing.T) {
	for _, withTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", withTLS), func(t *testing.T) {
			const timeout = 300 * time.Millisecond
			var ca *testpki.CA
			if withTLS {
				ca = testpki.NewCA(t, "members")
			}
			raftAddrs := testnet.FreeAddrs(t, 3)
			var peers []Peer
			for i, a := range raftAddrs {
				peers = append(peers, Peer{ID: fmt.Sprintf("n%d", i+1), RaftAddr: a})
			}
			stores := make([]*state.Store, 3)
			nodes := make([]*Node, 3)
			for i, p := range peers {
				opts := Options{DataDir: t.TempDir(), NodeID: p.ID, RaftAddr: p.RaftAddr, Peers: peers,
					Bootstrap: true, ElectionTimeout: timeout, FaultInjection: true}
				if withTLS {
					pair := ca.Peer(t, p.ID)
					r, err := certs.Load(certs.Files{Cert: pair.CertFile, Key: pair.KeyFile, CA: ca.CertFile})
					if err != nil {
						t.Fatal(err)
					}
					opts.TLS = r
				}
				stores[i] = state.New()
				n, err := Open(stores[i], opts)
				if err != nil {
					t.Fatal(err)
				}
				nodes[i] = n
				t.Cleanup(func() { _ = n.Close(5 * time.Second) })
			}
			leaderIdx := func(skip int) int {
				for i, n := range nodes {
					if i != skip && n.IsLeader() {
						return i
					}
				}
				return -1
			}
			waitFor(t, 15*time.Second, "a leader", func() bool { return leaderIdx(-1) >= 0 })
			l := leaderIdx(-1)
			if _, err := stores[l].Apply("c", nodesBatch(0, 1)); err != nil {
				t.Fatal(err)
			}
			if err := nodes[l].LinearizableRead(context.Background()); err != nil {
				t.Fatalf("read on the leader before the partition: %v", err)
			}

			var others []string
			for i, p := range peers {
				if i != l {
					others = append(others, p.ID)
				}
			}
			if err := nodes[l].Partition(others); err != nil {
				t.Fatal(err)
			}
			cut := time.Now()
			if got, _ := nodes[l].Partitioned(); fmt.Sprint(got) != fmt.Sprint(others) {
				t.Fatalf("Partitioned() = %v, want %v", got, others)
			}
			var readErr error
			for readErr == nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				readErr = nodes[l].LinearizableRead(ctx)
				cancel()
			}
			refusedAfter := time.Since(cut)
			var nle *state.NotLeaderError
			if !errors.Is(readErr, state.ErrUnavailable) || errors.As(readErr, &nle) {
				t.Fatalf("read on the cut-off leader: %v; want an error wrapping state.ErrUnavailable", readErr)
			}
			if refusedAfter > 3*timeout {
				t.Fatalf("the cut-off leader refused reads only %v after the cut (election timeout %v)", refusedAfter, timeout)
			}
			waitFor(t, 15*time.Second, "a new leader", func() bool { return leaderIdx(l) >= 0 })
			nl := leaderIdx(l)
			if _, err := stores[nl].Apply("c", nodesBatch(1, 2)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(2 * timeout)
			if nodes[l].LinearizableRead(context.Background()) == nil || stores[l].Revision("c") != 1 {
				t.Fatalf("the cut-off member answered a read, or got revision %d", stores[l].Revision("c"))
			}

			if err := nodes[l].Heal(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, 20*time.Second, "the healed member to catch up", func() bool { return stores[l].Revision("c") == 2 })
			var nle2 *state.NotLeaderError
			waitFor(t, 10*time.Second, "the healed member to name the leader", func() bool {
				return errors.As(nodes[l].LinearizableRead(context.Background()), &nle2) && nle2.LeaderID == peers[nl].ID
			})
			t.Logf("reads refused %v after the cut", refusedAfter)
		})
	}
}

// TestPartitionNeedsFaultInjection: without Options.FaultInjection, Partition is refused
// with a typed error, and an unknown peer id is refused.
func TestPartitionNeedsFaultInjection(t *testing.T) {
	_, n := open(t, t.TempDir(), nil)
	if err := n.Partition([]string{"x"}); !errors.Is(err, ErrFaultInjectionDisabled) {
		t.Fatalf("Partition without fault injection: %v", err)
	}
	addr := testnet.FreeAddrs(t, 1)[0]
	_, m := open(t, t.TempDir(), func(o *Options) { o.NodeID, o.RaftAddr, o.FaultInjection, o.Bootstrap = "a", addr, true, true })
	var upe *UnknownPeerError
	if err := m.Partition([]string{"b"}); !errors.As(err, &upe) || upe.ID != "b" {
		t.Fatalf("Partition of an unknown peer: %v", err)
	}
	if err := m.Partition([]string{"a"}); !errors.As(err, &upe) {
		t.Fatalf("Partition from itself: %v", err)
	}
}

// TestFaultLayerFraming: a connection with the header is identified, and refused while its
// peer is cut off; one without (a member without fault injection) passes raft's bytes on
// whole.
func TestFaultLayerFraming(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := newFaultLayer(&plainStreamLayer{Listener: lis, advertise: lis.Addr()}, "server:1", slog.New(slog.DiscardHandler))
	defer server.Close()
	client := newFaultLayer(&plainStreamLayer{advertise: lis.Addr()}, "client:1", slog.New(slog.DiscardHandler))
	addr := raft.ServerAddress(lis.Addr().String())

	roundTrip := func(dial func() (net.Conn, error)) (string, error) {
		c, err := dial()
		if err != nil {
			return "", err
		}
		defer c.Close()
		if _, err := c.Write([]byte{0, 'h', 'i'}); err != nil {
			return "", err
		}
		s, err := server.Accept()
		if err != nil {
			return "", err
		}
		defer s.Close()
		buf := make([]byte, 3)
		_, err = io.ReadFull(s, buf)
		return string(buf), err
	}
	got, err := roundTrip(func() (net.Conn, error) { return client.Dial(addr, time.Second) })
	if err != nil || got != "\x00hi" {
		t.Fatalf("with a header: %q, %v", got, err)
	}
	got, err = roundTrip(func() (net.Conn, error) { return net.Dial("tcp", string(addr)) })
	if err != nil || got != "\x00hi" {
		t.Fatalf("without a header: %q, %v", got, err)
	}
	server.setBlocked([]raft.ServerAddress{"client:1"})
	var pe *errPartitioned
	if _, err := roundTrip(func() (net.Conn, error) { return client.Dial(addr, time.Second) }); !errors.As(err, &pe) {
		t.Fatalf("from a cut-off peer: %v", err)
	}
	client.setBlocked([]raft.ServerAddress{addr})
	if _, err := client.Dial(addr, time.Second); !errors.As(err, &pe) {
		t.Fatalf("dial to a cut-off peer: %v", err)
	}
}
