package durable

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Fault injection (tests only): with Options.FaultInjection, the raft transport's stream
// layer can cut this member off from chosen peers (Node.Partition), so that a test can
// partition real processes whose gRPC ports stay reachable. hashicorp's network transport
// dials each peer at its one raft address, so the cut happens in the stream layer: a dial to a
// cut-off peer fails, a connection a cut-off peer opened is closed on its first read, and the
// open connections to and from a peer are closed when it is cut off.
//
// The address an inbound connection comes from is an ephemeral port, so a member with fault
// injection starts every connection it dials with a header naming its own advertised raft
// address: faultMagic, a 2-byte big-endian length, the address. The accepting side reads it
// before raft reads anything. raft's own first byte is an RPC type (a small number), never
// faultMagic, so a connection without the header (from a member without fault injection) is
// passed on whole, its peer unknown and never cut. Without fault injection nothing of this
// runs and the framing is raft's own.

// faultMagic is the first byte of the header of a connection dialed with fault injection.
const faultMagic = 0xF5

// maxHeaderAddr bounds the address in the header.
const maxHeaderAddr = 1024

// ErrFaultInjectionDisabled is returned by Node.Partition and Node.Heal on a node opened
// without Options.FaultInjection.
var ErrFaultInjectionDisabled = errors.New("durable: fault injection is not enabled on this node")

// UnknownPeerError is returned by Node.Partition for a peer id that is not a member.
type UnknownPeerError struct {
	// ID is the id that names no member.
	ID string
}

func (e *UnknownPeerError) Error() string {
	return fmt.Sprintf("durable: %q is not a peer of this node", e.ID)
}

// errPartitioned is the error of a dial to, or a connection from, a peer cut off by fault
// injection.
type errPartitioned struct{ peer raft.ServerAddress }

func (e *errPartitioned) Error() string {
	return fmt.Sprintf("raft peer %s is cut off by fault injection", e.peer)
}

// faultLayer is a raft.StreamLayer that can cut the connections to and from some peers.
type faultLayer struct {
	inner raft.StreamLayer
	// self is this member's advertised raft address, sent in the header of dialed connections.
	self raft.ServerAddress
	log  *slog.Logger

	mu      sync.Mutex
	blocked map[raft.ServerAddress]bool
	// conns are the open connections whose peer is known.
	conns map[*faultConn]struct{}
}

func newFaultLayer(inner raft.StreamLayer, self raft.ServerAddress, log *slog.Logger) *faultLayer {
	return &faultLayer{inner: inner, self: self, log: log, blocked: map[raft.ServerAddress]bool{}, conns: map[*faultConn]struct{}{}}
}

// Accept returns the next inbound connection; its header is read, and the peer checked, on
// the connection's first read, in raft's goroutine for it (a slow peer never holds up the
// accept loop).
func (l *faultLayer) Accept() (net.Conn, error) {
	c, err := l.inner.Accept()
	if err != nil {
		return nil, err
	}
	return &faultConn{Conn: c, layer: l, inbound: true}, nil
}

// Close closes the listener.
func (l *faultLayer) Close() error { return l.inner.Close() }

// Addr is the inner layer's (the advertised address).
func (l *faultLayer) Addr() net.Addr { return l.inner.Addr() }

// Dial connects to a peer that is not cut off and sends the header.
func (l *faultLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if l.isBlocked(address) {
		return nil, &errPartitioned{peer: address}
	}
	c, err := l.inner.Dial(address, timeout)
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, 3, 3+len(l.self))
	hdr[0] = faultMagic
	binary.BigEndian.PutUint16(hdr[1:], uint16(len(l.self)))
	hdr = append(hdr, l.self...)
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write(hdr); err != nil {
		c.Close()
		return nil, fmt.Errorf("raft peer %s: writing the fault-injection header: %w", address, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	fc := &faultConn{Conn: c, layer: l, peer: address, identified: true}
	if !l.track(fc) {
		c.Close()
		return nil, &errPartitioned{peer: address}
	}
	return fc, nil
}

func (l *faultLayer) isBlocked(a raft.ServerAddress) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.blocked[a]
}

// track records an open connection to or from a known peer; false if the peer is cut off.
func (l *faultLayer) track(c *faultConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.blocked[c.peer] {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *faultLayer) untrack(c *faultConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
}

// setBlocked makes peers the cut-off set (none heals) and closes the open connections to and
// from them.
func (l *faultLayer) setBlocked(peers []raft.ServerAddress) {
	l.mu.Lock()
	l.blocked = map[raft.ServerAddress]bool{}
	for _, p := range peers {
		l.blocked[p] = true
	}
	var cut []*faultConn
	for c := range l.conns {
		if l.blocked[c.peer] {
			cut = append(cut, c)
			delete(l.conns, c)
		}
	}
	l.mu.Unlock()
	for _, c := range cut {
		_ = c.Conn.Close()
	}
	l.log.Warn("fault injection: raft peers cut off", "peers", peers, "connections_closed", len(cut))
}

// blockedPeers returns the cut-off set, sorted.
func (l *faultLayer) blockedPeers() []raft.ServerAddress {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]raft.ServerAddress, 0, len(l.blocked))
	for p := range l.blocked {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// faultConn is a connection of a faultLayer. An inbound one reads the header on its first
// Read (only raft's goroutine for the connection reads it).
type faultConn struct {
	net.Conn
	layer   *faultLayer
	inbound bool

	// Set before the connection is tracked (Dial), or by the reading goroutine (inbound).
	identified bool
	peer       raft.ServerAddress
	// r holds what was read past the header, when the peer sent none.
	r *bufio.Reader
}

func (c *faultConn) Read(p []byte) (int, error) {
	if !c.identified {
		if err := c.identify(); err != nil {
			_ = c.Close()
			return 0, err
		}
	}
	if c.r != nil {
		if c.r.Buffered() > 0 {
			return c.r.Read(p)
		}
		c.r = nil
	}
	return c.Conn.Read(p)
}

// identify reads the header of an inbound connection, if it has one, and refuses a cut-off
// peer.
func (c *faultConn) identify() error {
	c.identified = true
	br := bufio.NewReaderSize(c.Conn, 16)
	first, err := br.Peek(1)
	if err != nil {
		return err
	}
	if first[0] != faultMagic {
		c.r = br // a member without fault injection: raft's bytes, unread
		return nil
	}
	var hdr [3]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint16(hdr[1:]))
	if n > maxHeaderAddr {
		return fmt.Errorf("fault-injection header: address of %d bytes", n)
	}
	addr := make([]byte, n)
	if _, err := io.ReadFull(br, addr); err != nil {
		return err
	}
	c.r = br // bytes of raft's first message may follow in the buffer
	c.peer = raft.ServerAddress(addr)
	if !c.layer.track(c) {
		return &errPartitioned{peer: c.peer}
	}
	return nil
}

func (c *faultConn) Close() error {
	c.layer.untrack(c)
	return c.Conn.Close()
}

// plainStreamLayer is raft's plaintext TCP stream layer (as raft.NewTCPTransport builds it),
// for the fault layer to wrap.
type plainStreamLayer struct {
	net.Listener
	advertise net.Addr
}

func (l *plainStreamLayer) Addr() net.Addr { return l.advertise }

func (l *plainStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(address), timeout)
}

// Partition cuts this member off from the peers with these ids (their raft traffic, both
// ways), and closes the open connections to and from them; the set replaces the previous one
// (none heals). For tests: it needs Options.FaultInjection (else ErrFaultInjectionDisabled);
// an id that names no member is an *UnknownPeerError. The gRPC API stays reachable.
func (n *Node) Partition(ids []string) error {
	if n.faults == nil {
		return ErrFaultInjectionDisabled
	}
	var addrs []raft.ServerAddress
	for _, id := range ids {
		i := slices.IndexFunc(n.opts.Peers, func(p Peer) bool { return p.ID == id })
		if i < 0 || id == n.opts.NodeID {
			return &UnknownPeerError{ID: id}
		}
		addrs = append(addrs, raft.ServerAddress(n.opts.Peers[i].RaftAddr))
	}
	n.faults.setBlocked(addrs)
	return nil
}

// Heal undoes Partition: every peer is reachable again.
func (n *Node) Heal() error { return n.Partition(nil) }

// Partitioned returns the ids of the peers this member is cut off from (sorted), or
// ErrFaultInjectionDisabled.
func (n *Node) Partitioned() ([]string, error) {
	if n.faults == nil {
		return nil, ErrFaultInjectionDisabled
	}
	var ids []string
	for _, a := range n.faults.blockedPeers() {
		for _, p := range n.opts.Peers {
			if raft.ServerAddress(p.RaftAddr) == a {
				ids = append(ids, p.ID)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// newFaultTransport is raft's network transport over a fault layer, which wraps the TLS
// stream layer (with t) or a plaintext TCP one; self is this member's raft address as the
// peers list it.
func newFaultTransport(bind string, advertise net.Addr, self string, t RaftTLS, logger hclog.Logger, log *slog.Logger) (*raft.NetworkTransport, *faultLayer, error) {
	if tcp, ok := advertise.(*net.TCPAddr); !ok || tcp.IP == nil || tcp.IP.IsUnspecified() {
		return nil, nil, fmt.Errorf("raft advertise address %s is not one a peer can reach", advertise)
	}
	var inner raft.StreamLayer
	if t != nil {
		l, err := newTLSStreamLayer(bind, advertise, t)
		if err != nil {
			return nil, nil, err
		}
		inner = l
	} else {
		lis, err := net.Listen("tcp", bind)
		if err != nil {
			return nil, nil, err
		}
		inner = &plainStreamLayer{Listener: lis, advertise: advertise}
	}
	layer := newFaultLayer(inner, raft.ServerAddress(self), log)
	return newNetworkTransport(layer, logger), layer, nil
}
