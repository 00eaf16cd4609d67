// Package browsertest finds the headless Chromium that browser tests drive. make test
// installs it (scripts/browser.sh) and sets SLUICE_REQUIRE_BROWSER=1, so that a test fails
// rather than skips when it is missing; elsewhere such tests skip.
package browsertest

import (
	"os"
	"os/exec"
	"testing"
)

// Path returns the path of Chromium: $SLUICE_BROWSER, else the first of chromium,
// chromium-browser and google-chrome on PATH. Without one it fails the test when
// SLUICE_REQUIRE_BROWSER=1, and skips it otherwise.
func Path(t testing.TB) string {
	t.Helper()
	for _, name := range []string{os.Getenv("SLUICE_BROWSER"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SLUICE_REQUIRE_BROWSER") == "1" {
		t.Fatal("no Chromium on PATH (run scripts/browser.sh install)")
	}
	t.Skip("no Chromium on PATH; scripts/browser.sh install installs it (make test requires it)")
	return ""
}
