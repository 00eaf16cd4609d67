package durable

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// RaftTLS makes the raft transport between members mutual TLS: a member accepts a
// connection only from a peer whose certificate its CA verifies, and dials a peer only if the
// peer's certificate verifies for the address it dials. internal/certs's Reloader is one, whose
// certificates can be reloaded while raft runs (new connections use them; raft's open
// connections keep going).
type RaftTLS interface {
	// ServerConfig is the configuration of the raft listener; it must require and verify
	// client certificates.
	ServerConfig(nextProtos ...string) *tls.Config
	// ClientConfig is the configuration of a connection to the peer at serverName (the host
	// of its raft address), presenting this member's certificate.
	ClientConfig(serverName string) *tls.Config
}

// tlsStreamLayer is a raft.StreamLayer over TCP with mutual TLS.
type tlsStreamLayer struct {
	net.Listener
	advertise net.Addr
	tls       RaftTLS
}

// newTLSTransport returns raft's network transport over a TLS stream layer listening on
// bind and advertising advertise.
func newTLSTransport(bind string, advertise net.Addr, t RaftTLS, logger hclog.Logger) (*raft.NetworkTransport, error) {
	if tcp, ok := advertise.(*net.TCPAddr); !ok || tcp.IP == nil || tcp.IP.IsUnspecified() {
		return nil, fmt.Errorf("raft advertise address %s is not one a peer can reach", advertise)
	}
	layer, err := newTLSStreamLayer(bind, advertise, t)
	if err != nil {
		return nil, err
	}
	return newNetworkTransport(layer, logger), nil
}

// newTLSStreamLayer listens on bind for mutual TLS connections.
func newTLSStreamLayer(bind string, advertise net.Addr, t RaftTLS) (*tlsStreamLayer, error) {
	lis, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	return &tlsStreamLayer{Listener: tls.NewListener(lis, t.ServerConfig()), advertise: advertise, tls: t}, nil
}

// newNetworkTransport is raft's network transport over layer, configured as
// raft.NewTCPTransport configures it.
func newNetworkTransport(layer raft.StreamLayer, logger hclog.Logger) *raft.NetworkTransport {
	return raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: layer, MaxPool: 3, Timeout: 10 * time.Second, Logger: logger,
	})
}

// Accept is the TLS listener's: the handshake, and so the check of the peer's certificate,
// happens on the connection's first read, in raft's goroutine for it (a slow peer never holds
// up the others); a refused peer's connection fails there, and raft logs why.

// Addr returns the address peers reach this member at.
func (l *tlsStreamLayer) Addr() net.Addr { return l.advertise }

// Dial connects to a peer and completes the handshake: the peer must present a certificate
// the CA verifies for the host it is dialed at.
func (l *tlsStreamLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	host, _, err := net.SplitHostPort(string(address))
	if err != nil {
		return nil, err
	}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: l.tls.ClientConfig(host)}
	c, err := d.Dial("tcp", string(address))
	if err != nil {
		var re *tls.RecordHeaderError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("raft peer %s does not speak TLS: %w", address, err)
		}
		return nil, fmt.Errorf("raft peer %s: %w", address, err)
	}
	return c, nil
}
