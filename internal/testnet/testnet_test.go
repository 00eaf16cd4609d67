package testnet

import (
	"net"
	"strconv"
	"testing"
)

func TestFreeAddrsAreDistinctAndFree(t *testing.T) {
	for range 20 {
		addrs := FreeAddrs(t, 9)
		seen := map[string]bool{}
		for _, a := range addrs {
			if seen[a] {
				t.Fatalf("%s handed out twice in %v", a, addrs)
			}
			seen[a] = true
			l, err := net.Listen("tcp", a)
			if err != nil {
				t.Fatalf("%s is not free: %v", a, err)
			}
			l.Close()
		}
	}
}

func TestFreeAddrsAvoidTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	if lo <= 20000 {
		t.Skipf("ephemeral range starts at %d: nothing below it to choose from", lo)
	}
	for _, a := range FreeAddrs(t, 5) {
		_, p, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		if port >= lo {
			t.Errorf("%s is in the ephemeral range (from %d)", a, lo)
		}
	}
}
