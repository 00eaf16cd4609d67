package quantity

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want float64
	}{
		{"3", 3}, {"500m", 0.5}, {"8Gi", 8 << 30}, {"1.5k", 1500}, {"2e3", 2000}, {"1E", 1e18}, {" 4 ", 4},
		{"250m", 0.25}, {"200Mi", 200 << 20}, {"1.5", 1.5}, {"-2", -2}, {"1e-3", 1e-3},
	}
	for _, tc := range tests {
		if got, err := Parse(tc.in); err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "Gi", "3x", "1e", "1.2.3", "1ex", "2 Gi"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}
