package explore_test

import (
	"flag"
	"regexp"
	"testing"

	"go.uber.org/goleak"

	"github.com/zksim/zksim/explore"
)

func TestFlawWhat(t *testing.T) {
	for name, want := range map[string]string{
		"LockOrdersByFullName":         "lock orders by full name",
		"LockRetriesCreateWithoutGUID": "lock retries create without guid",
	} {
		if got := (explore.Flaw{Name: name}).What(); got != want {
			t.Errorf("Flaw{Name: %q}.What() = %q, want %q", name, got, want)
		}
	}
}

func TestRecipe(t *testing.T) {
	if len(explore.Recipes) != 22 { // 11, and all of them again on an ensemble
		t.Errorf("%d recipe machines, want 22", len(explore.Recipes))
	}
	for _, m := range explore.Recipes {
		if got, ok := explore.Recipe(m.Name); !ok || got.Name != m.Name || got.What == "" {
			t.Errorf("Recipe(%q) = %+v, %v", m.Name, got, ok)
		}
		if len(m.What) > 46 { // zksim explore's column
			t.Errorf("%s's What %q is longer than 46 characters", m.Name, m.What)
		}
	}
	if _, ok := explore.Recipe("NoSuchRecipe"); ok {
		t.Error("Recipe(NoSuchRecipe) found one")
	}
}

// setFlag sets a rapid flag for the test.
func setFlag(t *testing.T, name, value string) {
	t.Helper()
	old := flag.Lookup(name).Value.String()
	if err := flag.Set(name, value); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set(name, old) })
}

// TestExplore: Explore reports, without failing the test, a real recipe
// that passes and a flawed one that fails, with rapid's report.
func TestExplore(t *testing.T) {
	setFlag(t, "rapid.seed", "1")
	setFlag(t, "rapid.checks", "20")
	setFlag(t, "rapid.nofailfile", "true")
	setFlag(t, "rapid.shrinktime", "100ms") // the failure needs no shrinking here
	m, _ := explore.Recipe("LockMutex")
	res := m.Explore(t, nil)
	if !res.Passed || res.Checks != 20 || res.Steps == 0 || res.Report != "" {
		t.Fatalf("LockMutex: %+v", res)
	}
	flawed := explore.Flaws[0].Machine // the lock without GUIDs
	res = flawed.Explore(t, nil)
	if res.Passed || !regexp.MustCompile(`failed after \d+ tests: VIOLATION: (liveness|orphan)`).MatchString(res.Report) {
		t.Fatalf("%s: passed %v, report %q", explore.Flaws[0].Name, res.Passed, res.Report)
	}
	if len(res.Logs) == 0 {
		t.Fatal("no logs of the failing run")
	}
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
