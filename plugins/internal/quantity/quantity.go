// Package quantity parses Kubernetes quantity strings ("500m", "8Gi", "1.5", "2e3") in plugin
// arguments into float64 base units, for the plugins (nodegroup, usage) that take them.
package quantity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Parse parses a Kubernetes quantity ("500m", "8Gi", "1.5", "2e3") into base units. Surrounding
// white space is ignored; decimal (n, u, m, k, M, G, T, P, E) and binary (Ki ... Ei) suffixes and
// decimal exponents (e3, E-2) are accepted.
func Parse(s string) (float64, error) {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && strings.IndexByte("+-0123456789.", s[end]) >= 0 {
		end++
	}
	num, suffix := s[:end], s[end:]
	if num == "" {
		return 0, fmt.Errorf("quantity %q: no number", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("quantity %q: %w", s, err)
	}
	if len(suffix) > 1 && (suffix[0] == 'e' || suffix[0] == 'E') {
		exp, err := strconv.Atoi(suffix[1:])
		if err != nil {
			return 0, fmt.Errorf("quantity %q: bad exponent", s)
		}
		return v * math.Pow10(exp), nil
	}
	m, ok := suffixes[suffix]
	if !ok {
		return 0, fmt.Errorf("quantity %q: unknown suffix %q", s, suffix)
	}
	return v * m, nil
}

var suffixes = map[string]float64{
	"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
	"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60,
}
