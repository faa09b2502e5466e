package conformance

import (
	"regexp"
	"testing"
)

// TestEnsembleCaseNames checks the ensemble group's shape: unique names
// usable in go test -run, none shared with the main suite.
func TestEnsembleCaseNames(t *testing.T) {
	names := EnsembleCaseNames()
	if len(names) != 9 {
		t.Errorf("%d ensemble cases, want 9: %q", len(names), names)
	}
	valid := regexp.MustCompile(`^ensemble/[a-z0-9-]+$`)
	seen := make(map[string]bool)
	for _, name := range CaseNames() {
		seen[name] = true
	}
	for _, name := range names {
		if seen[name] {
			t.Errorf("case %q twice", name)
		}
		seen[name] = true
		if !valid.MatchString(name) {
			t.Errorf("case name %q: want ensemble/ and lower-case letters, digits and -", name)
		}
	}
}
