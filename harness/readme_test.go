package harness_test

import (
	"os"
	"strings"
	"testing"
)

// The README's "Exploring your own code" shows the machine of
// example_harness_test.go verbatim: this keeps it true.
func TestREADMEShowsTheExample(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_harness_test.go")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	example := strings.TrimRight(s[strings.Index(s, "// electionMachine explores"):], "\n")
	_, section, ok := strings.Cut(string(readme), "## Exploring your own code")
	if !ok {
		t.Fatal("README has no section \"Exploring your own code\"")
	}
	if !strings.Contains(section, "```go\n"+example+"\n```") {
		t.Errorf("README's example differs from example_harness_test.go")
	}
	if n := strings.Count(example, "\n") + 1; n > 80 {
		t.Errorf("the example's test code is %d lines; the README promises a few dozen", n)
	}
}
