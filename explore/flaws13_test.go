package explore

import (
	"crypto/rand"
	"encoding/binary"
	"flag"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/zksim/zksim/harness"
)

// randomBase returns a fresh non-zero seed.
func randomBase() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return max(binary.LittleEndian.Uint64(b[:])>>1, 1)
}

var failedAfter = regexp.MustCompile(`failed after (\d+) tests`)

// TestFlawsOnRandomSeeds checks that each flaw of flaws13.go and
// flaws29.go is caught at the CI budget (the suite's checks and rapid's
// default steps) on every one of N random seeds, N from ZKSIM_FLAW_SEEDS
// (skipped without it; the base seed from ZKSIM_FLAW_BASE, else random and
// logged). It logs, for each flaw, on which check each seed caught it and
// how long it took.
//
//	ZKSIM_FLAW_SEEDS=20 go test ./explore/ -run TestFlawsOnRandomSeeds -v -timeout 60m
func TestFlawsOnRandomSeeds(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZKSIM_FLAW_SEEDS"))
	if n <= 0 {
		t.Skip("set ZKSIM_FLAW_SEEDS=N to run")
	}
	base := randomBase()
	if v, err := strconv.ParseUint(os.Getenv("ZKSIM_FLAW_BASE"), 10, 64); err == nil {
		base = v
	}
	defer setFlagForTest(t, "rapid.checks", "RAPID_CHECKS", "1000")()
	defer setFlagForTest(t, "rapid.nofailfile", "RAPID_NOFAILFILE", "true")() // a fail file would replay in every later seed
	defer setFlagForTest(t, "rapid.shrinktime", "RAPID_SHRINKTIME", "1ms")()
	oldSeed := flag.Lookup("rapid.seed").Value.String()
	defer func() { _ = flag.Set("rapid.seed", oldSeed) }()
	t.Logf("base seed %d (ZKSIM_FLAW_BASE), %d seeds, %s checks each", base, n, flag.Lookup("rapid.checks").Value)
	for _, f := range Flaws[len(Flaws)-6:] { // issue 13's five (flaws13.go), issue 29's (flaws29.go)
		var (
			caught  int
			runs    []string
			slowest time.Duration
		)
		for i := range n {
			seed := base + uint64(i)*0x9e3779b97f4a7c15
			seed = max(seed>>1, 1)
			if err := flag.Set("rapid.seed", strconv.FormatUint(seed, 10)); err != nil {
				t.Fatal(err)
			}
			c := harness.NewRecorder(t.Name(), nil)
			start := time.Now()
			rapid.Check(c, harness.InBubbles(t, f.Machine.Property(t)))
			d := time.Since(start)
			slowest = max(slowest, d)
			report := strings.Join(c.Errors(), "\n")
			m := failedAfter.FindStringSubmatch(report)
			switch {
			case !c.Failed():
				runs = append(runs, "MISSED")
			case !regexp.MustCompile(f.Want).MatchString(report):
				runs = append(runs, "OTHER")
				t.Errorf("%s, seed %d: caught, but not as %q: %s", f.Name, seed, f.Want, report)
			default:
				caught++
				k, _ := strconv.Atoi(m[1])
				runs = append(runs, strconv.Itoa(k+1))
			}
		}
		t.Logf("%-32s caught on %d/%d seeds (check #: %s); slowest %v", f.Name, caught, n, strings.Join(runs, " "), slowest.Round(time.Millisecond))
		if caught < n {
			t.Errorf("%s caught on %d of %d seeds only", f.Name, caught, n)
		}
	}
}
