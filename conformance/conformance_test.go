package conformance

import (
	"regexp"
	"testing"
)

// TestCaseNames checks the suite's own shape: at least 150 cases, unique
// names, and names that are usable in go test -run and as path components.
func TestCaseNames(t *testing.T) {
	names := CaseNames()
	t.Logf("%d cases", len(names))
	if len(names) < 150 {
		t.Errorf("%d cases, want at least 150", len(names))
	}
	valid := regexp.MustCompile(`^[a-z0-9]+/[A-Za-z0-9+.-]+$`)
	seen := make(map[string]bool)
	for _, name := range names {
		if seen[name] {
			t.Errorf("case %q twice", name)
		}
		seen[name] = true
		if !valid.MatchString(name) {
			t.Errorf("case name %q: want group/case of letters, digits, +, . and -", name)
		}
	}
}
