// Package testnet gives tests loopback addresses to hand to servers they start.
package testnet

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// FreeAddrs returns n distinct loopback addresses ("127.0.0.1:port") that were free when
// chosen. All n are held open until the last is chosen, so that the kernel cannot hand the
// same port out twice, and they are chosen below the kernel's ephemeral range where it can
// be read: a port of that range, free when chosen, may be taken by any outgoing connection
// (raft's dials among them) before the server binds it.
func FreeAddrs(t testing.TB, n int) []string {
	t.Helper()
	lo := ephemeralLow()
	out := make([]string, 0, n)
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l := listenBelow(lo)
		if l == nil {
			var err error
			if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
		}
		ls = append(ls, l)
		out = append(out, l.Addr().String())
	}
	return out
}

// FreeAddr returns one free loopback address; see FreeAddrs. Tests that need several
// addresses at once must take them from one FreeAddrs call.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return FreeAddrs(t, 1)[0]
}

// listenBelow listens on a random port in [10000, lo), or returns nil when none was found
// in a few tries or the range is unknown.
func listenBelow(lo int) net.Listener {
	if lo <= 20000 {
		return nil
	}
	for range 20 {
		port := 10000 + rand.IntN(lo-10000)
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); err == nil {
			return l
		}
	}
	return nil
}

// ephemeralLow returns the first port of the kernel's ephemeral range (0 when unknown).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return lo
}
